package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/httprunner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/crashtest"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
	"github.com/capdir/capdir/projector"
)

// The breaker end to end: real embedded NATS, real bbolt, HTTP, and a local
// upstream that counts the calls it gets.

const brkEnvName = "BRK_TOKEN"

// newBrkUpstream is a local upstream whose answer to the n-th hit (from 1) is
// status(n); it counts hits and records the bearer tokens it was sent.
func newBrkUpstream(t *testing.T, status func(n int64) int) *upstreamtest.Upstream {
	t.Helper()
	return upstreamtest.Start(t, func(w http.ResponseWriter, r *http.Request) {
		code := status(upstreamtest.Hit(r))
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"status":%d}`, code)
	})
}

func always(code int) func(int64) int { return func(int64) int { return code } }

// brkEnv is a credential environment whose one value the test replaces.
type brkEnv struct {
	mu  sync.Mutex
	val string
}

func (e *brkEnv) set(v string) { e.mu.Lock(); e.val = v; e.mu.Unlock() }

func (e *brkEnv) lookup(name string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if name != brkEnvName {
		return "", false
	}
	return e.val, true
}

// brkClock is a fake clock the test moves by hand.
type brkClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *brkClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *brkClock) advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// brkWorld is what every breaker test shares: an upstream, a credential, a clock.
type brkWorld struct {
	up    *upstreamtest.Upstream
	env   *brkEnv
	clock *brkClock
}

func newBrkWorld(t *testing.T, status func(int64) int) *brkWorld {
	env := &brkEnv{val: "token-one"}
	clock := &brkClock{now: time.Date(2026, 7, 26, 4, 36, 19, 0, time.UTC)}
	return &brkWorld{up: newBrkUpstream(t, status), env: env, clock: clock}
}

// config sets a node's HTTP timeout and workers for the world.
func (w *brkWorld) config(c *capdir.Config) {
	c.HTTPRunner.Timeout = 5 * time.Second
	c.Dispatch.Workers = 2
}

// opts wires a node to the world's credential and clock.
func (w *brkWorld) opts() []capdir.Option {
	return []capdir.Option{capdir.WithEnv(w.env.lookup), capdir.WithClock(w.clock.Now)}
}

// addRow creates an http row that calls the upstream with bearer:BRK_TOKEN.
func (w *brkWorld) addRow(t *testing.T, n *capdir.Node, key string) {
	t.Helper()
	row := map[string]any{
		"key":      key,
		"type":     "http",
		"target":   "GET " + w.up.URL + "/v1/thing?q=$1",
		"auth":     "bearer:" + brkEnvName,
		"category": "tools",
		"content": "# WHAT: Fetch one thing from a local upstream that checks a bearer token.\n" +
			"# ARGS: $1=query\n# EX: [" + key + "]x[/" + key + "]\n# OUTPUT: JSON",
	}
	b, _ := json.Marshal(row)
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", string(b)); code != 201 {
		t.Fatalf("POST row: %d %s", code, body)
	}
}

type brkAnswer struct {
	OK     bool   `json:"ok"`
	Ran    bool   `json:"ran"`
	Result string `json:"result"`
	Proof  struct {
		InvocationID string `json:"invocation_id"`
		Status       string `json:"status"`
	} `json:"proof"`
}

// invoke is one POST /api/dispatch of key.
func invoke(t *testing.T, n *capdir.Node, key string) brkAnswer {
	t.Helper()
	code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"`+key+`","body":"x"}`)
	if code != 200 {
		t.Fatalf("dispatch %s: %d %s", key, code, body)
	}
	var a brkAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatalf("dispatch answer %q: %v", body, err)
	}
	return a
}

// mustRefuse checks a refused call: the literal, nothing ran, and a receipt saying so.
func mustRefuse(t *testing.T, n *capdir.Node, key string, a brkAnswer) {
	t.Helper()
	want := "ERR:breaker_open:" + key + " \u2014 8 consecutive auth failures; credential is dead until replaced."
	if a.Result != want || a.OK || a.Ran || a.Proof.Status != wire.StatusRefusedBreakerOpen {
		t.Fatalf("want a breaker refusal, got %+v", a)
	}
	code, body := nodetest.Do(t, n, "GET", "/api/receipts/"+a.Proof.InvocationID, "")
	var rc struct {
		Status string `json:"status"`
		Ran    bool   `json:"ran"`
		OK     bool   `json:"ok"`
		Result string `json:"result"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &rc) != nil {
		t.Fatalf("receipt %s: %d %s", a.Proof.InvocationID, code, body)
	}
	if rc.Status != wire.StatusRefusedBreakerOpen || rc.Ran || rc.OK || rc.Result != want {
		t.Fatalf("receipt of a refusal: %s", body)
	}
}

// mustReach checks a call that reached the upstream.
func mustReach(t *testing.T, a brkAnswer) {
	t.Helper()
	if !a.Ran || a.Proof.Status == wire.StatusRefusedBreakerOpen {
		t.Fatalf("want a call that reached the upstream, got %+v", a)
	}
}

func (w *brkWorld) hits(t *testing.T, want int64) {
	t.Helper()
	if got := w.up.Hits(); got != want {
		t.Fatalf("upstream hits = %d, want %d", got, want)
	}
}

// trip makes 12 calls through the nodes in turn: 8 reach the upstream, 4 are refused.
func (w *brkWorld) trip(t *testing.T, key string, nodes ...*capdir.Node) {
	t.Helper()
	start := w.up.Hits()
	for i := 1; i <= 12; i++ {
		n := nodes[(i-1)%len(nodes)]
		a := invoke(t, n, key)
		if i <= 8 {
			mustReach(t, a)
			if !strings.HasPrefix(a.Result, "ERR:") {
				t.Fatalf("call %d: a 401 should be an ERR: result, got %q", i, a.Result)
			}
		} else {
			mustRefuse(t, n, key, a)
		}
		if got, want := w.up.Hits()-start, int64(min(i, 8)); got != want {
			t.Fatalf("after call %d: %d upstream hits, want %d", i, got, want)
		}
	}
}

type brkList struct {
	Breakers []struct {
		Key      string    `json:"key"`
		Strikes  int       `json:"strikes"`
		Open     bool      `json:"open"`
		OpenedAt time.Time `json:"opened_at"`
		ClosesAt time.Time `json:"closes_at"`
		Message  string    `json:"message"`
	} `json:"breakers"`
}

func listBreakers(t *testing.T, n *capdir.Node) brkList {
	t.Helper()
	code, body := nodetest.Do(t, n, "GET", "/api/breaker", "")
	var l brkList
	if code != 200 || json.Unmarshal([]byte(body), &l) != nil {
		t.Fatalf("GET /api/breaker: %d %s", code, body)
	}
	return l
}

// mustList checks that GET /api/breaker lists exactly keys.
func mustList(t *testing.T, n *capdir.Node, keys ...string) brkList {
	t.Helper()
	l := listBreakers(t, n)
	var got []string
	for _, b := range l.Breakers {
		got = append(got, b.Key)
	}
	if strings.Join(got, ",") != strings.Join(keys, ",") {
		t.Fatalf("open breakers = %v, want %v", got, keys)
	}
	return l
}

func reset(t *testing.T, n *capdir.Node, key string) {
	t.Helper()
	code, body := nodetest.Do(t, n, "DELETE", "/api/breaker/"+key, "")
	if want := `{"ok":true,"key":"` + key + `","reset":true}`; code != 200 || strings.TrimSpace(body) != want {
		t.Fatalf("DELETE /api/breaker/%s: %d %s, want 200 %s", key, code, body, want)
	}
}

func TestBreakerTripsAtEightAndOwnerResetCloses(t *testing.T) {
	w := newBrkWorld(t, always(401))
	n := nodetest.Start(t, w.config, w.opts()...)
	const key = "BRK_DEAD"
	w.addRow(t, n, key)
	mustList(t, n)

	w.trip(t, key, n)
	if got := w.up.Header("Authorization"); got[0] != "Bearer token-one" {
		t.Fatalf("upstream got Authorization %q", got[0])
	}

	l := mustList(t, n, key)
	b := l.Breakers[0]
	opened := w.clock.Now()
	if b.Strikes != 8 || !b.Open || !b.OpenedAt.Equal(opened) || !b.ClosesAt.Equal(opened.Add(time.Hour)) ||
		b.Message != breaker.Message(key, 8) {
		t.Fatalf("listed breaker = %+v", b)
	}
	if st, err := settledBreaker(t, n, key); err != nil || !st.Open || st.Strikes != 8 {
		t.Fatalf("projected breaker = %+v, %v", st, err)
	}

	reset(t, n, key)
	mustList(t, n)
	mustReach(t, invoke(t, n, key))
	w.hits(t, 9)
	if st, _ := settledBreaker(t, n, key); st.Open || st.Strikes != 1 {
		t.Fatalf("after reset and one 401: %+v", st)
	}
}

func TestBreakerRoutesRefuse(t *testing.T) {
	n := nodetest.Start(t, nil)
	for _, tc := range []struct {
		method, path, key string
		want              int
	}{
		{"GET", "/api/breaker", "", 401},
		{"GET", "/api/breaker", "wrong-key-0123456789", 401},
		{"DELETE", "/api/breaker/K", "", 401},
		{"GET", "/api/breaker/K", "", 401},
		{"DELETE", "/api/breaker/bad.key", nodetest.Key, 400},
		{"DELETE", "/api/breaker/bad%20key", nodetest.Key, 400},
		{"GET", "/api/breaker/a*b", nodetest.Key, 400},
	} {
		if code, body := nodetest.DoKey(t, n, tc.method, tc.path, "", tc.key); code != tc.want {
			t.Errorf("%s %s: %d %s, want %d", tc.method, tc.path, code, body, tc.want)
		}
	}
	// A reset of a row that never struck is allowed; a closed breaker reads as closed.
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"NEVER_STRUCK","type":"fn","target":"echo","content":"# WHAT: never strikes"}`); code != 201 {
		t.Fatalf("POST: %d %s", code, body)
	}
	reset(t, n, "NEVER_STRUCK")
	code, body := nodetest.Do(t, n, "GET", "/api/breaker/NEVER_STRUCK", "")
	if code != 200 || strings.TrimSpace(body) != `{"key":"NEVER_STRUCK","strikes":0,"open":false}` {
		t.Fatalf("GET one closed breaker: %d %s", code, body)
	}
}

// Any non-auth answer ends the run of strikes: 7 401s, then a 200 or a 500, then
// 7 more 401s never trip it.
func TestBreakerRunEndsOnOtherAnswer(t *testing.T) {
	for _, other := range []int{200, 500} {
		t.Run(fmt.Sprint(other), func(t *testing.T) {
			w := newBrkWorld(t, func(n int64) int {
				if n == 8 {
					return other
				}
				return 401
			})
			n := nodetest.Start(t, w.config, w.opts()...)
			const key = "BRK_FLAKY"
			w.addRow(t, n, key)
			for i := 1; i <= 15; i++ {
				mustReach(t, invoke(t, n, key))
			}
			w.hits(t, 15)
			if st, _ := settledBreaker(t, n, key); st.Open || st.Strikes != 7 {
				t.Fatalf("breaker = %+v, want closed with 7 strikes", st)
			}
			mustList(t, n)
			// The 16th 401 is the 8th in a row: it trips.
			mustReach(t, invoke(t, n, key))
			mustRefuse(t, n, key, invoke(t, n, key))
			w.hits(t, 16)
		})
	}
}

// freePort returns a loopback address nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	addr, err := crashtest.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// Two nodes on one log: A runs the embedded server and lets B connect over TCP; B
// has its own projection. Their workers compete for the same requests, and the
// breaker is one fold of one log, so the count is shared.
func TestBreakerSharedByTwoNodes(t *testing.T) {
	w := newBrkWorld(t, always(401))
	var bCreds string
	a := nodetest.Start(t, func(c *capdir.Config) {
		w.config(c)
		c.Log.Listen = freePort(t)
		c.Name = "node-a"
		bCreds = addBusIdentity(t, c.Log.DataDir, "node-b", eventlog.RoleNode)
	}, w.opts()...)
	url := a.Log().ClientURL()
	if url == "" {
		t.Fatal("node A does not listen for NATS clients")
	}
	b := nodetest.Start(t, func(c *capdir.Config) {
		w.config(c)
		c.Log.NATSURL = url
		c.Log.Creds = bCreds
		c.Name = "node-b"
	}, w.opts()...)
	const key = "BRK_SHARED"
	w.addRow(t, a, key)

	w.trip(t, key, a, b)
	w.hits(t, 8)
	// Both refuse, whichever worker takes the request.
	for range 3 {
		mustRefuse(t, a, key, invoke(t, a, key))
		mustRefuse(t, b, key, invoke(t, b, key))
	}
	w.hits(t, 8)
	mustList(t, a, key)
	mustList(t, b, key)

	// The requests really were spread over both nodes' workers. A's projection is
	// read only once it has caught up: the last call was answered by B.
	if err := nodetest.CatchUp(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	workers := map[string]bool{}
	code, body := nodetest.Do(t, a, "GET", "/api/receipts?key="+key+"&limit=100", "")
	var rcs struct {
		Receipts []struct {
			Worker string `json:"worker"`
		} `json:"receipts"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &rcs) != nil || len(rcs.Receipts) != 18 {
		t.Fatalf("receipts: HTTP %d, %d receipts, want 18", code, len(rcs.Receipts))
	}
	for _, rc := range rcs.Receipts {
		workers[rc.Worker] = true
	}
	t.Logf("receipts written by %v", workers)

	// A reset through B lets the very next call through A reach the upstream,
	// whichever node's worker takes it. (A's listing may lag B's reset for a moment:
	// a read on another node is eventually consistent; the gate is not.)
	reset(t, b, key)
	mustList(t, b)
	mustReach(t, invoke(t, a, key))
	w.hits(t, 9)

	// Both projections are the same fold.
	for _, n := range []*capdir.Node{a, b} {
		if err := nodetest.CatchUp(context.Background(), n); err != nil {
			t.Fatal(err)
		}
		mustList(t, n)
	}
	da, _ := a.Projector().Digest()
	db, _ := b.Projector().Digest()
	if da != db {
		t.Fatalf("projections differ: A %s, B %s", da, db)
	}
}

// laggingWorker is a second worker process on node A's log whose projection falls
// behind on purpose: while lag is set, every data batch it applies takes 300ms more.
type laggingWorker struct {
	lag  atomic.Bool
	proj *projector.Projector
}

func startLaggingWorker(t *testing.T, w *brkWorld, a *capdir.Node, creds string) *laggingWorker {
	natsURL := a.Log().ClientURL()
	t.Helper()
	lw := &laggingWorker{}
	l, err := eventlog.Open(context.Background(), eventlog.Config{NATSURL: natsURL, Creds: creds, Clock: w.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	lw.proj, err = projector.Open(projector.Config{Path: filepath.Join(t.TempDir(), "lagging.db"), Log: l})
	if err != nil {
		t.Fatal(err)
	}
	lw.proj.OnApplied(func(stream string, _ []eventlog.Stored) {
		if stream == wire.DataStream && lw.lag.Load() {
			time.Sleep(300 * time.Millisecond)
		}
	})
	salt := dispatcher.TagSaltFor(nodetest.Key)
	hr, err := httprunner.New(httprunner.Config{Env: w.env.lookup, TagSalt: salt, Limits: runner.Limits{Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := dispatcher.NewService(dispatcher.ServiceConfig{
		Log: l, Projector: lw.proj, Env: w.env.lookup, TagSalt: salt, Settings: dispatcher.Settings{Workers: 2}, Name: "lagging",
		Runners: runner.Runners{runner.RunnerHTTP: hr}, Clock: w.clock.Now, Tokens: a.Verifier(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- lw.proj.Run(ctx) }()
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		svc.Close()
		cancel()
		<-done
		lw.proj.Close()
		l.Close()
	})
	return lw
}

// The gate reads the worker's own projection, which may lag the node that answered
// the caller. A request appended after the receipt that tripped the breaker must
// still be refused by a worker whose projection has not folded that receipt yet:
// the worker waits until its projection has reached the request.
func TestBreakerWorkerWaitsForItsProjection(t *testing.T) {
	w := newBrkWorld(t, always(401))
	var creds string
	a := nodetest.Start(t, func(c *capdir.Config) {
		w.config(c)
		c.Log.Listen = freePort(t)
		creds = addBusIdentity(t, c.Log.DataDir, "lagging", eventlog.RoleNode)
	}, w.opts()...)
	lw := startLaggingWorker(t, w, a, creds)
	a.Dispatcher().Close() // every request now goes to the lagging worker
	const key = "BRK_LAG"
	w.addRow(t, a, key)
	for range 7 {
		mustReach(t, invoke(t, a, key))
	}
	lw.lag.Store(true)
	mustReach(t, invoke(t, a, key)) // the 8th strike; A has folded it, the worker maybe not
	mustRefuse(t, a, key, invoke(t, a, key))
	w.hits(t, 8)
	lw.lag.Store(false)
	if st, err := lw.proj.Breaker(key); err != nil || !st.Open {
		t.Fatalf("lagging worker's breaker = %+v, %v", st, err)
	}
}

// An open breaker survives a restart of the node and a replay into a fresh bbolt.
func TestBreakerSurvivesRestartAndReplay(t *testing.T) {
	w := newBrkWorld(t, always(401))
	dir := t.TempDir()
	const key = "BRK_DURABLE"

	cfg := capdir.Config{TerminalKey: nodetest.Key, Log: eventlog.Config{DataDir: dir}, HTTP: capdir.HTTPConfig{Addr: "127.0.0.1:0"}}
	w.config(&cfg)
	first, err := capdir.Start(context.Background(), cfg, w.opts()...)
	if err != nil {
		t.Fatal(err)
	}
	w.addRow(t, first, key)
	w.trip(t, key, first)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := first.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	// Replay the stopped node's log into a fresh file: still open.
	w.clock.advance(time.Minute)
	second := nodetest.Start(t, func(c *capdir.Config) { w.config(c); c.Log.DataDir = dir }, w.opts()...)
	path := filepath.Join(t.TempDir(), "fresh.db")
	if err := projector.Rebuild(ctx, projector.Config{Path: path, Log: second.Log(), Breaker: second.Config().Breaker}, nil); err != nil {
		t.Fatal(err)
	}
	fresh, err := projector.Open(projector.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	st, err := fresh.Breaker(key)
	fresh.Close()
	if err != nil || !st.Open || st.Strikes != 8 {
		t.Fatalf("replayed breaker = %+v, %v", st, err)
	}

	// The restarted node still refuses, without calling the upstream.
	mustList(t, second, key)
	mustRefuse(t, second, key, invoke(t, second, key))
	w.hits(t, 8)
}

// Replacing the credential the row names closes the breaker at once.
func TestBreakerClosesWhenCredentialReplaced(t *testing.T) {
	w := newBrkWorld(t, func(int64) int { return 401 })
	n := nodetest.Start(t, w.config, w.opts()...)
	const key = "BRK_ROTATE"
	w.addRow(t, n, key)
	w.trip(t, key, n)

	w.env.set("token-two")
	// The listing sees the replacement at once, before any call notices it.
	mustList(t, n)
	a := invoke(t, n, key)
	mustReach(t, a)
	w.hits(t, 9)
	tokens := w.up.Header("Authorization")
	last := tokens[len(tokens)-1]
	if last != "Bearer token-two" {
		t.Fatalf("upstream got %q after rotation", last)
	}
	// The new credential's 401 starts a new run of strikes.
	if st, _ := settledBreaker(t, n, key); st.Open || st.Strikes != 1 {
		t.Fatalf("after rotation: %+v", st)
	}
	mustList(t, n)
	// Seven more failures on the new credential trip it again.
	for range 7 {
		mustReach(t, invoke(t, n, key))
	}
	mustRefuse(t, n, key, invoke(t, n, key))
	w.hits(t, 16)
	// Going back to the old credential is a replacement too.
	w.env.set("token-one")
	mustReach(t, invoke(t, n, key))
	w.hits(t, 17)
}

// The cooldown closes it: refused a moment before, not listed and callable after.
func TestBreakerClosesAfterCooldown(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cooldown time.Duration
	}{
		{"default hour", 0},
		{"configured", 5 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newBrkWorld(t, always(401))
			n := nodetest.Start(t, func(c *capdir.Config) { w.config(c); c.Breaker.Cooldown = tc.cooldown }, w.opts()...)
			const key = "BRK_COOL"
			w.addRow(t, n, key)
			w.trip(t, key, n)
			cool := tc.cooldown
			if cool == 0 {
				cool = breaker.DefaultCooldown
			}
			if l := mustList(t, n, key); !l.Breakers[0].ClosesAt.Equal(l.Breakers[0].OpenedAt.Add(cool)) {
				t.Fatalf("listed = %+v, want closes_at opened_at+%s", l.Breakers[0], cool)
			}

			w.clock.advance(cool - time.Second)
			mustList(t, n, key)
			mustRefuse(t, n, key, invoke(t, n, key))
			w.hits(t, 8)

			w.clock.advance(time.Second)
			mustList(t, n)
			mustReach(t, invoke(t, n, key))
			w.hits(t, 9)
			if st, _ := settledBreaker(t, n, key); st.Open || st.Strikes != 1 {
				t.Fatalf("after the cooldown and one 401: %+v", st)
			}
		})
	}
}

// settledBreaker reads key's breaker once n has folded everything in the log: a
// dispatch returns when its receipt is appended, before n's projection folds it.
func settledBreaker(t *testing.T, n *capdir.Node, key string) (breaker.State, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.Projector().Settle(ctx, wire.DataStream); err != nil {
		t.Fatal(err)
	}
	return n.Projector().Breaker(key)
}

// A reset of a key with neither a row nor a breaker state is 404 and appends
// nothing; a deleted row's breaker state can still be reset.
func TestBreakerResetOfAnUnknownKey(t *testing.T) {
	w := newBrkWorld(t, always(401))
	n := nodetest.Start(t, w.config, w.opts()...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	before, err := n.Log().LastSeq(ctx, wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	code, body := nodetest.Do(t, n, "DELETE", "/api/breaker/NO_SUCH_KEY", "")
	if code != 404 || strings.TrimSpace(body) != `{"error":"not_found","key":"NO_SUCH_KEY"}` {
		t.Fatalf("DELETE /api/breaker/NO_SUCH_KEY: %d %s", code, body)
	}
	if after, err := n.Log().LastSeq(ctx, wire.DataStream); err != nil || after != before {
		t.Fatalf("the refused reset appended: data stream %d -> %d (%v)", before, after, err)
	}

	const key = "BRK_GONE"
	w.addRow(t, n, key)
	w.trip(t, key, n)
	if code, body := nodetest.Do(t, n, "DELETE", "/api/directory/"+key, ""); code != 200 {
		t.Fatalf("DELETE row: %d %s", code, body)
	}
	reset(t, n, key)
}
