package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats-server/v2/server"
)

// fiveServers is a five-server JetStream cluster in process (no accounts, no
// auth), so that three of them keep the JetStream meta layer up while a stream's
// three replicas are down or alone.
type fiveServers struct {
	t     *testing.T
	opts  []*server.Options
	srv   []*server.Server
	names map[string]int
}

func startFiveServers(t *testing.T) *fiveServers {
	t.Helper()
	f := &fiveServers{t: t, names: map[string]int{}}
	var routes []*url.URL
	for i := range 5 {
		o := &server.Options{ServerName: fmt.Sprintf("s%d", i), Host: "127.0.0.1", Port: freePortNumber(t),
			JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true,
			Cluster: server.ClusterOpts{Name: "five", Host: "127.0.0.1", Port: freePortNumber(t)}}
		routes = append(routes, &url.URL{Scheme: "nats-route", Host: fmt.Sprintf("127.0.0.1:%d", o.Cluster.Port)})
		f.opts, f.names[o.ServerName] = append(f.opts, o), i
	}
	f.srv = make([]*server.Server, 5)
	t.Cleanup(func() {
		for i := range f.srv {
			f.stop(i)
		}
	})
	for i, o := range f.opts {
		o.Routes = routes
		f.start(i)
	}
	return f
}

func (f *fiveServers) start(i int) {
	s, err := server.NewServer(f.opts[i].Clone())
	if err != nil {
		f.t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(20 * time.Second) {
		f.t.Fatalf("%s not ready", f.opts[i].ServerName)
	}
	f.srv[i] = s
}

func (f *fiveServers) stop(i int) {
	if f.srv[i] != nil {
		f.srv[i].Shutdown()
		f.srv[i].WaitForShutdown()
		f.srv[i] = nil
	}
}

func (f *fiveServers) urls() string {
	var u []string
	for _, o := range f.opts {
		u = append(u, fmt.Sprintf("nats://127.0.0.1:%d", o.Port))
	}
	return strings.Join(u, ",")
}

// While a stream has no leader, every replica answers a stream info with its own
// state, and one that was down while events were acknowledged does not hold
// them. The log's State must not take that answer for the log's: a projector
// that had folded those events would read it as a log behind its projection,
// fail for good, and its node serve no more writes once its server returned.
// Here: events acknowledged while one replica of the control stream was down,
// then the two others shut down and the first started again, so that the stream
// has no leader and the only replica that answers is behind (the two servers
// that hold no replica keep the JetStream meta layer up).
func TestStreamStateIgnoresALeaderlessReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a five-server cluster and waits for a replica to answer without a leader (about 15 s)")
	}
	f := startFiveServers(t)
	ctx := context.Background()
	var l *eventlog.Log
	c := &sampleClusterRun{t: t}
	c.await(clusterPatience, "the log open on five servers", func() bool {
		var err error
		l, err = eventlog.Open(ctx, eventlog.Config{NATSURL: f.urls(), Replicas: 3, ElectionWait: 2 * time.Second})
		return err == nil
	})
	t.Cleanup(func() { l.Close() })
	appendN := func(from, n int) uint64 {
		t.Helper()
		var seq uint64
		for i := from; i < from+n; i++ {
			ev, err := wire.NewEvent(time.Now(), wire.TypeDirectoryMutate, "test", map[string]int{"i": i})
			if err != nil {
				t.Fatal(err)
			}
			if seq, err = l.Append(ctx, wire.DirectorySubject(fmt.Sprintf("k%d", i)), ev); err != nil {
				t.Fatal(err)
			}
		}
		return seq
	}
	appendN(0, 3)
	st, err := l.JetStream().Stream(ctx, wire.ControlStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Cluster.Replicas) != 2 {
		t.Fatalf("%s: replicas %+v", wire.ControlStream, info.Cluster)
	}
	behind := f.names[info.Cluster.Replicas[0].Name]
	f.stop(behind)
	acked := appendN(3, 5) // stored by the leader and the other replica
	f.stop(f.names[info.Cluster.Leader])
	f.stop(f.names[info.Cluster.Replicas[1].Name])
	f.start(behind)

	// The lone replica answers once it has been without a leader long enough
	// (JetStream's lost-quorum interval); until then no answer comes at all.
	c.await(clusterPatience, "an answer about "+wire.ControlStream+" from its lone replica", func() bool {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		got, err := l.State(sctx, wire.ControlStream)
		switch {
		case err == nil:
			t.Fatalf("State answered %+v while sequence %d was acknowledged: a leaderless replica's own state", got, acked)
		case errors.Is(err, eventlog.ErrElecting):
			t.Logf("State: %v", err)
			return true
		}
		return false
	})

	// With the replica that holds everything back, the stream has a leader
	// again: Holds finds what was acknowledged, and a sequence the log never
	// held is still reported behind once the election wait is over, so a real
	// loss is not hidden by asking again.
	f.start(f.names[info.Cluster.Replicas[1].Name])
	c.await(clusterPatience, "the log holding sequence "+fmt.Sprint(acked)+" again", func() bool {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		got, err := l.Holds(sctx, wire.ControlStream, acked)
		return err == nil && got.LastSeq >= acked
	})
	got, err := l.Holds(ctx, wire.ControlStream, acked+10)
	if err != nil || got.LastSeq >= acked+10 || !got.Replicated {
		t.Fatalf("Holds(%d) = %+v, %v: want the log's state, behind and replicated", acked+10, got, err)
	}
}
