//go:build unix

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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

// A call cut by a SIGKILL of the capdir node running it, on the sample cluster
// (three nats-server processes, a `capdir serve` per server, R3 streams), runs
// again as soon as that node is back, not after the ack wait: every node runs
// with an ack wait of ten minutes, so that JetStream's redelivery cannot hand the
// call on within the test and only the restarted node taking back what it held
// can. The row's upstream holds the first call until its caller is killed; once
// the node is started again, the caller's retry with the same Idempotency-Key,
// sent to another node, is answered 200 with the result of the call run again;
// the upstream got two calls, both from the killed node (the cut one and the one
// after its restart), none from the nodes that kept running; the log holds one
// request and one receipt for the invocation once the dispatch consumer is idle.
func TestClusterCutCallRunsAtItsNodesRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds nats-server and capdir and kills a node of a cluster; run without -short")
	}
	c := startKillCluster(t, "--ack-wait", "10m")
	up := &holdingUpstream{held: make(chan string, 1), cut: make(chan struct{})}
	us := httptest.NewServer(up)
	t.Cleanup(us.Close)
	const key = "K9_HELD"
	row, _ := json.Marshal(map[string]string{"key": key, "type": "http", "target": "GET " + us.URL + "/held?b=$1",
		"auth": "bearer:" + nodeTagEnv, "content": "# WHAT: an upstream that holds its first call"})
	if code, body := c.owner(0, "PUT", "/api/directory/"+key, string(row)); code != 201 && code != 200 {
		t.Fatalf("PUT %s: %d %s", key, code, body)
	}
	l, err := eventlog.Open(context.Background(), eventlog.Config{DataDir: filepath.Join(c.dir, "audit"), NATSURL: c.urls, Creds: c.creds, Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// A node takes back only a request stored after the dispatch consumer's
	// leader was elected, server clocks allowed two seconds apart: a consumer
	// created a moment ago is given the time.
	c.await(time.Minute, "a dispatch consumer leader elected three seconds ago", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		cons, err := l.JetStream().Consumer(ctx, wire.DataStream, dispatcher.ConsumerName)
		if err != nil {
			return false
		}
		ci, err := cons.Info(ctx)
		return err == nil && ci.Cluster != nil && ci.Cluster.LeaderSince != nil && time.Since(*ci.Cluster.LeaderSince) > 3*time.Second
	})
	dispatch := func(i int) (int, string, error) {
		req, _ := http.NewRequest("POST", c.nodes[i].srv.URL+"/api/dispatch", strings.NewReader(`{"key":"`+key+`","body":"once"}`))
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
	first := make(chan struct{})
	go func() { // its answer does not matter: the call is cut
		defer close(first)
		dispatch(0)
	}()
	defer func() { <-first }()
	var holder string
	select {
	case holder = <-up.held:
	case <-time.After(time.Minute):
		t.Fatal("the upstream never got the call")
	}
	victim, other := -1, -1
	for i, n := range c.nodes {
		if n.name == holder {
			victim = i
		} else if other < 0 {
			other = i
		}
	}
	if victim < 0 {
		t.Fatalf("the call came from %q, no node of the cluster", holder)
	}
	if err := c.nodes[victim].srv.Kill(); err != nil {
		t.Fatal(err)
	}
	c.await(30*time.Second, "the end of the held call once its node was killed", func() bool {
		select {
		case <-up.cut:
			return true
		default:
			return false
		}
	})

	restarted := time.Now()
	c.startNode(c.nodes[victim])
	ready := time.Now()
	var code int
	var body string
	c.await(2*time.Minute, "answer 200 to the retry of the cut call", func() bool {
		code, body, err = dispatch(other) // 202 after the dispatch wait while the call has no receipt
		return err == nil && code == 200
	})
	answered := time.Now()
	if !strings.Contains(body, `"result":"HTTP 200:ran once"`) {
		t.Fatalf("the retry was answered %d %s; want the result of the call run again", code, body)
	}
	t.Logf("cluster cut-call figures: %s held the call and was killed; the retry, sent to %s, answered 200 %s after the restart began, %s after the node answered /healthz (%s to start it)",
		holder, c.nodes[other].name, answered.Sub(restarted).Round(time.Millisecond), answered.Sub(ready).Round(time.Millisecond), ready.Sub(restarted).Round(time.Millisecond))

	nodetest.WaitDispatchIdle(t, l)
	count, err := crashtest.Count(context.Background(), l)
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
	calls := up.made()
	var from []string
	for _, cl := range calls {
		from = append(from, fmt.Sprintf("%s at %s", cl.node, cl.at.Format("15:04:05.000")))
	}
	if len(calls) != 2 || calls[1].node != holder {
		t.Fatalf("the upstream got %d calls (%s); want 2, both from %s: the cut one and its run after the restart", len(calls), strings.Join(from, ", "), holder)
	}
}
