package eventlog_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats-server/v2/server"
)

// A batch acknowledgement that looks like success but does not match the batch
// (no count, a count that is not the batch's, or nothing readable) says nothing
// of where the appends are: those with their event id are sent again alone and
// each answered with the sequence that holds it (the batch was stored, so as a
// duplicate), those without (WithoutDedupe) fail, saying they may or may not be
// stored, and nothing is stored twice. The server always answers a batch
// truly, so the log reads an altered copy of its answer.
func TestGroupCommitUnmatchedAckSendsAgainTheAppendsWithIDs(t *testing.T) {
	alter := map[string]func(ack map[string]any){
		"no count":       func(ack map[string]any) { delete(ack, "count") },
		"another count":  func(ack map[string]any) { ack["count"] = ack["count"].(float64) + 1 },
		"another stream": func(ack map[string]any) { delete(ack, "stream") },
		"unreadable":     nil,
	}
	for name, f := range alter {
		t.Run(name, func(t *testing.T) {
			l := openGrouped(t, t.TempDir(), eventlog.GroupCommitOn, false)
			ctx := context.Background()
			l.AlterBatchAcks(func(data []byte) []byte {
				if f == nil {
					return []byte("{not json")
				}
				var ack map[string]any
				if err := json.Unmarshal(data, &ack); err != nil || ack["count"] == nil {
					t.Errorf("the server's batch acknowledgement %s", data)
					return data
				}
				f(ack)
				b, _ := json.Marshal(ack)
				return b
			})
			evs := events(t, l, 4)
			release := l.HoldGroup()
			ps := make([]*eventlog.Pending, len(evs))
			for i, ev := range evs {
				var opts []eventlog.AppendOption
				if i%2 == 1 {
					opts = append(opts, eventlog.WithoutDedupe())
				}
				p, err := l.AppendAsync(wire.RequestSubject("K"), ev, opts...)
				if err != nil {
					t.Fatal(err)
				}
				ps[i] = p
			}
			release()
			var last uint64
			for i, p := range ps {
				seq, err := eventlog.AwaitAck(ctx, p)
				if i%2 == 1 {
					if !errors.Is(err, eventlog.ErrBatchUnmatched) || !strings.Contains(err.Error(), "may or may not be stored") || !strings.Contains(err.Error(), "WithoutDedupe") {
						t.Fatalf("append %d, without its event id: %v; want ErrBatchUnmatched, saying it may or may not be stored", i, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("append %d, with its event id: %v; want it sent again and answered", i, err)
				}
				if !p.Duplicate() {
					t.Fatalf("append %d: answered at %d as newly stored; the batch stored it", i, seq)
				}
				holdsAt(t, l, evs[i], seq)
				last = max(last, seq)
			}
			for i := range evs { // the batch, stored once
				holdsAt(t, l, evs[i], last-2+uint64(i))
			}
			after, err := l.Append(ctx, wire.RequestSubject("K"), events(t, l, 1)[0])
			if err != nil || after != last+2 {
				t.Fatalf("the next append at %d (%v); want %d: nothing stored twice", after, err, last+2)
			}
			if !l.Idle() {
				t.Fatal("appends still in flight")
			}
		})
	}
}

// A server whose max_batch_size (jetstream { limits { batch { max_msgs } } })
// is below the log's batch refuses the first batch over it, naming its limit:
// the log then caps its batches at it, and no later batch is refused.
func TestGroupCommitLearnsTheServersBatchLimit(t *testing.T) {
	const limit = 4
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
		StoreDir: t.TempDir(), NoSigs: true, NoLog: true, JetStreamLimits: server.JSLimitOpts{MaxBatchSize: limit}})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	if !srv.ReadyForConnections(20 * time.Second) {
		t.Fatal("server not ready")
	}
	l, err := eventlog.Open(context.Background(), eventlog.Config{NATSURL: srv.ClientURL(), GroupCommit: eventlog.GroupCommitOn})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	round := func(n int) {
		t.Helper()
		evs := events(t, l, n)
		for i, p := range groupAppendEvents(t, l, evs) {
			seq, err := eventlog.AwaitAck(context.Background(), p)
			if err != nil {
				t.Fatalf("append %d: %v", i, err)
			}
			holdsAt(t, l, evs[i], seq)
		}
	}
	round(10) // over the limit: refused, each sent alone
	if batches, refused := l.GroupCommits(); batches != 1 || refused != 1 {
		t.Fatalf("%d batches sent, %d refused; want the first refused", batches, refused)
	}
	round(10) // a batch of the limit, the others alone
	round(limit)
	checkConcurrent(t, l)
	if batches, refused := l.GroupCommits(); batches < 3 || refused != 1 {
		t.Fatalf("%d batches sent, %d refused; want batches of at most %d, none refused after the first", batches, refused, limit)
	}
}

// A batch refused whole settles while its appends are registered again one by
// one: the log is not idle meanwhile, and Close waits until each is answered.
func TestGroupCommitCloseWaitsForARefusedBatchSentAgain(t *testing.T) {
	l := openGrouped(t, t.TempDir(), eventlog.GroupCommitOn, false)
	ctx := context.Background()
	entered, resume := make(chan struct{}), make(chan struct{})
	l.BeforeSendingAgain(func() {
		close(entered)
		<-resume
	})
	evs := events(t, l, 3)
	seq0, err := l.Append(ctx, wire.RequestSubject("K"), evs[0])
	if err != nil {
		t.Fatal(err)
	}
	ps := groupAppendEvents(t, l, []wire.Event{evs[1], evs[0], evs[2]}) // evs[0] again: refused whole
	<-entered
	if l.Idle() || l.PendingAppends() == 0 {
		t.Fatal("the log says it is idle while a refused batch's appends are to be sent again")
	}
	closed := make(chan error, 1)
	go func() { closed <- l.Close() }()
	close(resume)
	if err := <-closed; err != nil {
		t.Fatalf("close: %v", err)
	}
	for i, p := range ps {
		select {
		case ack := <-p.Stored():
			if i == 1 && (ack.Sequence != seq0 || !ack.Duplicate) {
				t.Fatalf("the event stored already: %+v, want sequence %d, duplicate", ack, seq0)
			}
		case <-p.Failed():
			t.Fatalf("append %d: %v", i, p.Err())
		default:
			t.Fatalf("append %d not answered when Close returned", i)
		}
	}
}
