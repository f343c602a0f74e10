//go:build unix

package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/crashtest"
	"github.com/capdir/capdir/internal/nodetest"
)

// holdingUpstream holds the first call it gets until its caller goes away, and
// answers every later one with "ran <b>". It records each call: the node that
// made it (the row's bearer credential is the node's name) and when.
type holdingUpstream struct {
	mu    sync.Mutex
	calls []upstreamCall
	held  chan string   // the node of the first call, once it came
	cut   chan struct{} // closed once the first call's caller went away
}

type upstreamCall struct {
	node string
	at   time.Time
}

func (u *holdingUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	node := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	u.mu.Lock()
	u.calls = append(u.calls, upstreamCall{node, time.Now()})
	first := len(u.calls) == 1
	u.mu.Unlock()
	if first {
		u.held <- node
		<-r.Context().Done()
		close(u.cut)
		return
	}
	io.WriteString(w, "ran "+r.URL.Query().Get("b"))
}

func (u *holdingUpstream) made() []upstreamCall {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]upstreamCall(nil), u.calls...)
}

// cutCallRun is the sample cluster as real processes (startKillCluster), every
// node with an ack wait of ten minutes so that JetStream's redelivery cannot hand
// a call on within a test, with one call cut: the node whose worker held it,
// its upstream holding the call, killed with SIGKILL.
type cutCallRun struct {
	t      *testing.T
	c      *killCluster
	up     *holdingUpstream
	l      *eventlog.Log // the tests' own connection to the cluster
	holder string        // the killed node's name
	victim int           // its index
	other  int           // a node that kept running
	first  chan struct{} // closed once the first dispatch was answered
}

const cutCallKey = "K9_HELD"

func startCutCall(t *testing.T) *cutCallRun {
	t.Helper()
	r := &cutCallRun{t: t, c: startKillCluster(t, "--ack-wait", "10m"), first: make(chan struct{}),
		up: &holdingUpstream{held: make(chan string, 1), cut: make(chan struct{})}}
	us := httptest.NewServer(r.up)
	t.Cleanup(us.Close)
	row, _ := json.Marshal(map[string]string{"key": cutCallKey, "type": "http", "target": "GET " + us.URL + "/held?b=$1",
		"auth": "bearer:" + nodeTagEnv, "content": "# WHAT: an upstream that holds its first call"})
	if code, body := r.c.owner(0, "PUT", "/api/directory/"+cutCallKey, string(row)); code != 201 && code != 200 {
		t.Fatalf("PUT %s: %d %s", cutCallKey, code, body)
	}
	var err error
	r.l, err = eventlog.Open(context.Background(), eventlog.Config{DataDir: filepath.Join(r.c.dir, "audit"), NATSURL: r.c.urls, Creds: r.c.creds, Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.l.Close() })
	// A node takes back only a request stored after the dispatch consumer's
	// leader was elected, server clocks allowed two seconds apart: a consumer
	// created a moment ago is given the time.
	r.c.await(time.Minute, "a dispatch consumer leader elected three seconds ago", func() bool {
		since := r.leaderSince()
		return !since.IsZero() && time.Since(since) > 3*time.Second
	})
	go func() { // its answer does not matter: the call is cut
		defer close(r.first)
		r.dispatch(0)
	}()
	t.Cleanup(func() { <-r.first })
	select {
	case r.holder = <-r.up.held:
	case <-time.After(time.Minute):
		t.Fatal("the upstream never got the call")
	}
	r.victim, r.other = -1, -1
	for i, n := range r.c.nodes {
		if n.name == r.holder {
			r.victim = i
		} else if r.other < 0 {
			r.other = i
		}
	}
	if r.victim < 0 {
		t.Fatalf("the call came from %q, no node of the cluster", r.holder)
	}
	if err := r.c.nodes[r.victim].srv.Kill(); err != nil {
		t.Fatal(err)
	}
	r.c.await(30*time.Second, "the end of the held call once its node was killed", func() bool {
		select {
		case <-r.up.cut:
			return true
		default:
			return false
		}
	})
	return r
}

// dispatch sends the call to node i, with the run's Idempotency-Key.
func (r *cutCallRun) dispatch(i int) (int, string, error) {
	req, _ := http.NewRequest("POST", r.c.nodes[i].srv.URL+"/api/dispatch", strings.NewReader(`{"key":"`+cutCallKey+`","body":"once"}`))
	req.Header.Set("x-terminal-key", nodetest.Key)
	req.Header.Set("content-type", "application/json")
	req.Header.Set("Idempotency-Key", "cut-call-on-a-cluster")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// leaderSince is when the dispatch consumer's leader was elected; zero when
// unknown.
func (r *cutCallRun) leaderSince() time.Time {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	cons, err := r.l.JetStream().Consumer(ctx, wire.DataStream, dispatcher.ConsumerName)
	if err != nil {
		return time.Time{}
	}
	ci, err := cons.Info(ctx)
	if err != nil || ci.Cluster == nil || ci.Cluster.LeaderSince == nil {
		return time.Time{}
	}
	return *ci.Cluster.LeaderSince
}

// calls lists the upstream's calls, for a message.
func (r *cutCallRun) calls() ([]upstreamCall, string) {
	calls := r.up.made()
	var from []string
	for _, cl := range calls {
		from = append(from, fmt.Sprintf("%s at %s", cl.node, cl.at.Format("15:04:05.000")))
	}
	return calls, strings.Join(from, ", ")
}

// A call cut by a SIGKILL of the capdir node running it, on the sample cluster
// (three nats-server processes, a `capdir serve` per server, R3 streams), runs
// again as soon as that node is back, not after the ack wait: with an ack wait of
// ten minutes, only the restarted node taking back what it held can run it
// within the test. Once the node is started again, the caller's retry with the
// same Idempotency-Key, sent to another node, is answered 200 with the result of
// the call run again; the upstream got two calls, both from the killed node (the
// row's bearer credential is the calling node's name): the cut one and the one
// after its restart, none from the nodes that kept running; the log holds one
// request and one receipt for the invocation once the dispatch consumer is idle.
func TestClusterCutCallRunsAtItsNodesRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds nats-server and capdir and kills a node of a cluster; run without -short")
	}
	r := startCutCall(t)
	restarted := time.Now()
	r.c.startNode(r.c.nodes[r.victim])
	ready := time.Now()
	var code int
	var body string
	r.c.await(2*time.Minute, "answer 200 to the retry of the cut call", func() bool {
		var err error
		code, body, err = r.dispatch(r.other) // 202 after the dispatch wait while the call has no receipt
		return err == nil && code == 200
	})
	answered := time.Now()
	if !strings.Contains(body, `"result":"HTTP 200:ran once"`) {
		t.Fatalf("the retry was answered %d %s; want the result of the call run again", code, body)
	}
	t.Logf("cluster cut-call figures: %s held the call and was killed; the retry, sent to %s, answered 200 %s after the restart began, %s after the node answered /healthz (%s to start it)",
		r.holder, r.c.nodes[r.other].name, answered.Sub(restarted).Round(time.Millisecond), answered.Sub(ready).Round(time.Millisecond), ready.Sub(restarted).Round(time.Millisecond))

	nodetest.WaitDispatchIdle(t, r.l)
	count, err := crashtest.Count(context.Background(), r.l)
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		Proof struct {
			InvocationID string `json:"invocation_id"`
		} `json:"proof"`
	}
	inv := ""
	if json.Unmarshal([]byte(body), &answer) == nil {
		inv = answer.Proof.InvocationID
	}
	if inv == "" || count.Requests[inv] != 1 || count.Receipts[inv] != 1 {
		t.Errorf("invocation %q: %d requests and %d receipts in the log; want 1 and 1", inv, count.Requests[inv], count.Receipts[inv])
	}
	if calls, from := r.calls(); len(calls) != 2 || calls[1].node != r.holder {
		t.Fatalf("the upstream got %d calls (%s); want 2, both from %s: the cut one and its run after the restart", len(calls), from, r.holder)
	}
}

// A node does not take back a call it held when the dispatch consumer has elected
// a leader since the call's delivery: the new leader may not hold that delivery,
// and may already have handed the call to another node. The call is cut as
// above; while its node is down the consumer's leader steps down; the restarted
// node logs that it leaves the call to the ack wait because of that election, and
// by then has not called the upstream again.
func TestClusterCutCallAfterAnElectionIsLeftToTheAckWait(t *testing.T) {
	if testing.Short() {
		t.Skip("builds nats-server and capdir and kills a node of a cluster; run without -short")
	}
	r := startCutCall(t)
	before := r.leaderSince()
	r.c.await(time.Minute, "a new leader of the dispatch consumer", func() bool {
		if since := r.leaderSince(); !since.IsZero() && !since.Equal(before) {
			return true
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		r.l.Conn().RequestWithContext(ctx, "$JS.API.CONSUMER.LEADER.STEPDOWN."+wire.DataStream+"."+dispatcher.ConsumerName, nil)
		return false
	})
	n := r.c.nodes[r.victim]
	r.c.startNode(n)
	r.c.await(time.Minute, "word from the restarted node that it leaves the call to the ack wait", func() bool {
		b, _ := os.ReadFile(n.srv.LogPath)
		return bytes.Contains(b, []byte("left to the ack wait")) && bytes.Contains(b, []byte("elected a leader"))
	})
	if calls, from := r.calls(); len(calls) != 1 {
		t.Fatalf("the upstream got %d calls (%s); want only the cut one", len(calls), from)
	}
}
