package eventlog_test

import (
	"context"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// BenchmarkGroupCommitServerLimit is BenchmarkGroupCommit's 64 appenders on an
// embedded server syncing every append whose max_batch_size (jetstream {
// limits { batch { max_msgs: 16 } } }) is below the log's batch: pipeline is
// group commit off, grouped on (the log learns the limit from the first
// refusal, and caps its batches at it).
//
//	go test -run '^$' -bench GroupCommitServerLimit -count 3 ./eventlog/
func BenchmarkGroupCommitServerLimit(b *testing.B) {
	for _, mode := range []string{eventlog.GroupCommitOff, eventlog.GroupCommitOn} {
		name := map[string]string{eventlog.GroupCommitOff: "pipeline", eventlog.GroupCommitOn: "grouped"}[mode]
		b.Run(name, func(b *testing.B) {
			srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
				StoreDir: b.TempDir(), SyncAlways: true, NoSigs: true, NoLog: true, JetStreamLimits: server.JSLimitOpts{MaxBatchSize: 16}})
			if err != nil {
				b.Fatal(err)
			}
			go srv.Start()
			b.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
			if !srv.ReadyForConnections(20 * time.Second) {
				b.Fatal("server not ready")
			}
			l := batchLog(b, eventlog.Config{NATSURL: srv.ClientURL(), GroupCommit: mode})
			runAppenders(b, l, func(subject string, ev wire.Event, _ *nats.Msg) (uint64, error) {
				p, err := l.AppendAsync(subject, ev)
				if err != nil {
					return 0, err
				}
				return eventlog.AwaitAck(context.Background(), p)
			})
			batches, refused := l.GroupCommits()
			b.ReportMetric(float64(refused), "refused")
			b.ReportMetric(float64(b.N)/float64(max(batches, 1)), "appends/batch")
		})
	}
}
