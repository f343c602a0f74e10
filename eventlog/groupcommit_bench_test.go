package eventlog_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"
)

// BenchmarkGroupCommit weighs group commit against the log's own pipeline: 64
// appenders at once, each appending a request-sized event with its event id as
// Nats-Msg-Id to the data stream of a real embedded server and waiting for its
// sequence, and
//
//   - pipeline: each append through AppendAsync (one publish, one PubAck),
//     group commit off;
//   - grouped: the same with Config.GroupCommit on (the log's own group commit);
//   - atomic: a committer written on jetstreamext that takes every append waiting while its batch is in
//     flight and sends them as one atomic batch (jetstreamext.PublishMsgBatch:
//     one publish per append, one commit acknowledgement per batch), each
//     append's sequence read from the BatchAck (last-count+1 .. last);
//   - fast: the same groups sent as a fast batch (jetstreamext.FastPublisher,
//     one per group), which is not isolated, so its acknowledgement gives no
//     sequence per append: measured for its cost only.
//
// It reports the process's CPU time per append (the server runs in process, so
// its share is counted), appends/s and allocations per append (the server's
// included). Run with -count 3: the variants alternate within each round.
//
//	go test -run '^$' -bench GroupCommit -count 3 ./eventlog/
func BenchmarkGroupCommit(b *testing.B) {
	for _, where := range []string{"r1-sync=" + eventlog.DefaultSync, "r1-sync=" + eventlog.SyncAlways, "r3"} {
		b.Run(where, func(b *testing.B) {
			open := func(b *testing.B, groupCommit string) *eventlog.Log {
				if where == "r3" {
					return batchLog(b, eventlog.Config{NATSURL: threeServers(b), Replicas: 3, GroupCommit: groupCommit})
				}
				return batchLog(b, eventlog.Config{DataDir: b.TempDir(), Sync: strings.TrimPrefix(where, "r1-sync="), GroupCommit: groupCommit})
			}
			b.Run("pipeline", func(b *testing.B) {
				l := open(b, eventlog.GroupCommitOff)
				runAppenders(b, l, func(subject string, ev wire.Event, msg *nats.Msg) (uint64, error) {
					p, err := l.AppendAsync(subject, ev)
					if err != nil {
						return 0, err
					}
					return eventlog.AwaitAck(context.Background(), p)
				})
			})
			b.Run("grouped", func(b *testing.B) {
				l := open(b, eventlog.GroupCommitOn)
				runAppenders(b, l, func(subject string, ev wire.Event, msg *nats.Msg) (uint64, error) {
					p, err := l.AppendAsync(subject, ev)
					if err != nil {
						return 0, err
					}
					return eventlog.AwaitAck(context.Background(), p)
				})
				batches, _ := l.GroupCommits()
				b.ReportMetric(float64(b.N)/float64(max(batches, 1)), "appends/batch")
			})
			b.Run("atomic", func(b *testing.B) {
				l := open(b, eventlog.GroupCommitOff)
				gc := &groupCommitter{send: atomicBatch(l.JetStream())}
				runAppenders(b, l, func(_ string, _ wire.Event, msg *nats.Msg) (uint64, error) { return gc.append(msg) })
				b.ReportMetric(float64(gc.appends.Load())/float64(max(gc.batches.Load(), 1)), "appends/batch")
			})
			b.Run("fast", func(b *testing.B) {
				l := open(b, eventlog.GroupCommitOff)
				gc := &groupCommitter{send: fastBatch(l.JetStream())}
				runAppenders(b, l, func(_ string, _ wire.Event, msg *nats.Msg) (uint64, error) { return gc.append(msg) })
				b.ReportMetric(float64(gc.appends.Load())/float64(max(gc.batches.Load(), 1)), "appends/batch")
			})
		})
	}
}

// batchLog is the log cfg opens, whose data stream allows both batch protocols.
func batchLog(b *testing.B, cfg eventlog.Config) *eventlog.Log {
	ctx := context.Background()
	l, err := eventlog.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	s, err := l.JetStream().Stream(ctx, wire.DataStream)
	if err != nil {
		b.Fatal(err)
	}
	sc := s.CachedInfo().Config
	sc.AllowAtomicPublish, sc.AllowBatchPublish = true, true
	if _, err := l.JetStream().UpdateStream(ctx, sc); err != nil {
		b.Fatal(err)
	}
	return l
}

const appenders = 64

// runAppenders runs b.N appends from 64 goroutines through appendOne, which gets
// the event, its subject and its message as the log would send it.
func runAppenders(b *testing.B, l *eventlog.Log, appendOne func(subject string, ev wire.Event, msg *nats.Msg) (uint64, error)) {
	data := map[string]string{"key": "GREET", "args": `{"name":"benchmark","greeting":"hello"}`}
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	errs := make(chan error, appenders)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, start := processCPU(b), time.Now()
	for range appenders {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				ev, err := l.NewEvent(wire.TypeInvocationRequested, "bench", data)
				if err != nil {
					errs <- err
					return
				}
				body, err := wire.Encode(&ev)
				if err != nil {
					errs <- err
					return
				}
				subject := wire.RequestSubject("GREET")
				msg := &nats.Msg{Subject: subject, Data: body, Header: nats.Header{jetstream.MsgIDHeader: []string{ev.ID}}}
				seq, err := appendOne(subject, ev, msg)
				if err != nil || seq == 0 {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed, cpu := time.Since(start), processCPU(b)-cpu0
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatalf("append: %v", err)
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/append")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "appends/s")
}

// processCPU is the user plus system CPU time this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// groupCommitter sends the appends waiting while a batch is in flight as the
// next batch, one batch in flight at a time.
type groupCommitter struct {
	send func(msgs []*nats.Msg) (last uint64, err error)

	mu      sync.Mutex
	waiting []*groupAppend
	busy    bool

	batches, appends atomic.Int64
}

type groupAppend struct {
	msg  *nats.Msg
	seq  uint64
	err  error
	done chan struct{}
}

func (gc *groupCommitter) append(msg *nats.Msg) (uint64, error) {
	a := &groupAppend{msg: msg, done: make(chan struct{})}
	gc.mu.Lock()
	gc.waiting = append(gc.waiting, a)
	if !gc.busy {
		gc.busy = true
		go gc.run()
	}
	gc.mu.Unlock()
	<-a.done
	return a.seq, a.err
}

func (gc *groupCommitter) run() {
	var msgs []*nats.Msg
	for {
		gc.mu.Lock()
		group := gc.waiting
		gc.waiting = nil
		if len(group) == 0 {
			gc.busy = false
			gc.mu.Unlock()
			return
		}
		gc.mu.Unlock()
		msgs = msgs[:0]
		for _, a := range group {
			msgs = append(msgs, a.msg)
		}
		last, err := gc.send(msgs)
		gc.batches.Add(1)
		gc.appends.Add(int64(len(group)))
		for i, a := range group {
			if err == nil {
				a.seq = last - uint64(len(group)-1-i)
			}
			a.err = err
			close(a.done)
		}
	}
}

// atomicBatch sends msgs as one atomic batch, waiting only for its commit.
func atomicBatch(js jetstream.JetStream) func([]*nats.Msg) (uint64, error) {
	return func(msgs []*nats.Msg) (uint64, error) {
		ack, err := jetstreamext.PublishMsgBatch(context.Background(), js, msgs, jetstreamext.BatchFlowControl{AckTimeout: 5 * time.Second})
		if err != nil {
			return 0, err
		}
		if ack.BatchSize != uint64(len(msgs)) {
			return 0, fmt.Errorf("batch acknowledged %d appends, sent %d", ack.BatchSize, len(msgs))
		}
		return ack.Sequence, nil
	}
}

// fastBatch sends msgs as one fast batch: its acknowledgement is the last
// sequence stored, which is not each append's (the batch is not isolated).
func fastBatch(js jetstream.JetStream) func([]*nats.Msg) (uint64, error) {
	return func(msgs []*nats.Msg) (uint64, error) {
		fp, err := jetstreamext.NewFastPublisher(js)
		if err != nil {
			return 0, err
		}
		for _, m := range msgs[:len(msgs)-1] {
			if _, err := fp.AddMsg(m); err != nil {
				return 0, err
			}
		}
		ack, err := fp.CommitMsg(context.Background(), msgs[len(msgs)-1])
		if err != nil {
			return 0, err
		}
		return ack.Sequence, nil
	}
}

// threeServers starts a cluster of three servers in process, listening on the
// loopback interface, and returns their client URLs. Their route ports are
// picked free beforehand, and another process may take one meanwhile (the
// server then never becomes ready): the cluster is then started again on new
// ports, a few times.
func threeServers(b testing.TB) string {
	const tries = 3
	for try := 1; ; try++ {
		urls, err := startThreeServers(b)
		if err == nil {
			return urls
		}
		if try == tries {
			b.Fatalf("a cluster of three servers, %d tries: %v", tries, err)
		}
		b.Logf("a cluster of three servers, try %d: %v; again on new ports", try, err)
	}
}

// startThreeServers is one try of threeServers: the servers it started are shut
// down when it fails, and at b's cleanup when it does not.
func startThreeServers(b testing.TB) (string, error) {
	var opts []*server.Options
	var routes []*url.URL
	for i := range 3 {
		o := &server.Options{ServerName: fmt.Sprintf("s%d", i), Host: "127.0.0.1", Port: server.RANDOM_PORT,
			JetStream: true, StoreDir: b.TempDir(), NoSigs: true, NoLog: true,
			Cluster: server.ClusterOpts{Name: "bench", Host: "127.0.0.1", Port: freePort(b)}}
		routes = append(routes, &url.URL{Scheme: "nats-route", Host: fmt.Sprintf("127.0.0.1:%d", o.Cluster.Port)})
		opts = append(opts, o)
	}
	var urls []string
	var started []*server.Server
	stop := func() {
		for _, s := range started {
			s.Shutdown()
			s.WaitForShutdown()
		}
	}
	for _, o := range opts {
		o.Routes = routes
		s, err := server.NewServer(o)
		if err != nil {
			stop()
			return "", err
		}
		go s.Start()
		started = append(started, s)
		if !s.ReadyForConnections(20 * time.Second) {
			stop()
			return "", fmt.Errorf("%s not ready in 20s (its route port %d may have been taken)", o.ServerName, o.Cluster.Port)
		}
		urls = append(urls, s.ClientURL())
	}
	b.Cleanup(stop)
	return strings.Join(urls, ","), nil
}

// freePort is a loopback port free a moment ago.
func freePort(b testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
