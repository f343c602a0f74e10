//go:build unix

package crashtest

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// binary is cmd/capdir, built once for the package's tests.
var binary struct {
	once      sync.Once
	dir, path string
	err       error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binary.dir != "" {
		os.RemoveAll(binary.dir)
	}
	os.Exit(code)
}

func capdirBinary(t *testing.T) string {
	t.Helper()
	binary.once.Do(func() {
		if binary.dir, binary.err = os.MkdirTemp("", "capdir-crashtest-"); binary.err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			binary.path, binary.err = Build(ctx, binary.dir)
		}
	})
	if binary.err != nil {
		t.Fatal(binary.err)
	}
	return binary.path
}

// envInt reads a positive integer from the environment, def when unset.
func envInt(t *testing.T, name string, def uint64) uint64 {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n == 0 {
		t.Fatalf("%s=%q: give a positive integer", name, v)
	}
	return n
}

const (
	crashClients = 6
	// A running server is killed after a random time in [runMin, runMax).
	runMin, runMax = 300 * time.Millisecond, 2 * time.Second
)

// crashRun is one crash test's state: the child server, the clients' gate, and
// what the schedule did.
type crashRun struct {
	t                  *testing.T
	bin, dataDir, addr string
	logDir             string
	rng                *rand.Rand
	gate               *Gate
	transport          *http.Transport

	spawns                   int
	startupKills, readyKills int
	startupKillsAfterReady   int
	lastReady                time.Duration
}

// TestKill9 kills `capdir serve` with SIGKILL at random points while concurrent
// clients write rows and invoke the echo row, restarting it on the same data dir
// each time; every third kill lands during startup, before /healthz answers. Then
// a node on the data dir runs what the kills handed back, and the test checks:
// every acknowledged write is served with its last acknowledged content (or a later
// unanswered one); in the log itself, every acknowledged invocation has one request
// and one receipt, no invocation two receipts, no receipt lacks its request, and
// every request has its receipt; and `capdir digest` equals the digest after
// `capdir replay`. CAPDIR_CRASH_KILLS sets the number of kills (3 by default),
// CAPDIR_CRASH_SEED replays a schedule.
func TestKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds capdir and kills it repeatedly; run without -short")
	}
	kills := int(envInt(t, "CAPDIR_CRASH_KILLS", 3))
	seed := envInt(t, "CAPDIR_CRASH_SEED", uint64(time.Now().UnixNano()))
	t.Logf("seed %d (CAPDIR_CRASH_SEED=%d replays this kill schedule), %d kills", seed, seed, kills)
	bin := capdirBinary(t)
	started := time.Now()
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r := &crashRun{
		t: t, bin: bin, dataDir: filepath.Join(dir, "data"), addr: addr, logDir: dir,
		rng: rand.New(rand.NewPCG(seed, 1)), gate: NewGate(),
		transport: &http.Transport{MaxIdleConnsPerHost: crashClients},
		lastReady: 500 * time.Millisecond,
	}
	hc := &http.Client{Transport: r.transport, Timeout: 40 * time.Second}
	ledger := NewLedger()

	up := newUpstream(t, seed)

	// The rows invocations call, acknowledged before any kill.
	srv := r.startReady()
	setup := &Client{ID: -1, URL: srv.URL, Key: nodetest.Key, HTTP: hc, Gate: r.gate, Ledger: ledger, Rng: r.rng}
	if o := setup.Put(context.Background(), EchoKey); o != Acked {
		t.Fatalf("PUT %s: %v; %v", EchoKey, o, ledger.Anomalies())
	}
	if o := setup.PutRow(context.Background(), SlowKey, "# WHAT: echo over http, slowly", "http", "GET "+up.URL+"/echo?b=$1"); o != Acked {
		t.Fatalf("PUT %s: %v; %v", SlowKey, o, ledger.Anomalies())
	}

	ctx, stopClients := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range crashClients {
		c := &Client{ID: i, URL: srv.URL, Key: nodetest.Key, HTTP: hc, Gate: r.gate, Ledger: ledger,
			Rng: rand.New(rand.NewPCG(seed, uint64(i)+2))}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Run(ctx)
		}()
	}
	for i := range kills {
		if i > 0 {
			srv = r.spawn()
		}
		if i%3 == 1 {
			r.killDuringStartup(srv)
		} else {
			r.killRunning(srv)
		}
	}
	stopClients()
	wg.Wait()
	workDone := time.Since(started)

	// A node on the data dir runs every request the kills handed back (a 1 s ack
	// wait instead of 30 s, so they come back at once), then stops cleanly.
	n := nodetest.Start(t, func(c *capdir.Config) {
		c.Log.DataDir = r.dataDir
		c.Dispatch.AckWait = time.Second
	})
	nodetest.WaitDispatchIdle(t, n.Log())
	served, err := Served(context.Background(), hc, n.URL(), nodetest.Key)
	if err != nil {
		t.Fatal(err)
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Node.Stop does not fold what the log received during its drain: fold the
	// last receipts first, so that the projection left on disk holds the whole log.
	if err := nodetest.CatchUp(stopCtx, n); err != nil {
		t.Fatal(err)
	}
	if err := n.Stop(stopCtx); err != nil {
		t.Fatalf("stop the settling node: %v", err)
	}

	var bad []string
	bad = append(bad, ledger.Anomalies()...)
	bad = append(bad, ledger.CheckRows(served)...)
	count, err := CountLog(context.Background(), r.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	bad = append(bad, count.Check(ledger.Invoked(), true)...)
	live, replayed := r.digests()
	if live != replayed {
		bad = append(bad, fmt.Sprintf("capdir digest %s after the run, %s after capdir replay", live, replayed))
	}

	acked := ledger.Invoked()
	ranUnacked := 0
	for inv, n := range count.Receipts {
		if _, ok := acked[inv]; !ok && n > 0 {
			ranUnacked++
		}
	}
	t.Logf("crash figures: seed %d; %d kills (%d while serving, %d during startup before /healthz answered, %d startup kills that came after it had answered); %d starts",
		seed, kills, r.readyKills, r.startupKills, r.startupKillsAfterReady, r.spawns+1)
	t.Logf("crash figures: writes acknowledged %d (POST %d, PUT %d), unanswered %d; invocations acknowledged %d, unanswered %d",
		ledger.Count("POST", Acked)+ledger.Count("PUT", Acked), ledger.Count("POST", Acked), ledger.Count("PUT", Acked),
		ledger.Count("POST", Unknown)+ledger.Count("PUT", Unknown), len(acked), ledger.Count("dispatch", Unknown))
	t.Logf("crash figures: log: %d events, %d requests, %d receipts (%d for invocations whose answer a kill cut); %d rows served; digest %s",
		count.Events, len(count.Requests), count.ReceiptTotal(), ranUnacked, len(served), live)
	again, ackedAgain := repeated(up, acked)
	t.Logf("crash figures: upstream of %s: %d calls; %d invocations called it more than once, %d of them acknowledged before the kill (must be 0: a call cut by a kill may run again, an acknowledged one never)",
		SlowKey, up.Hits(), again, ackedAgain)
	t.Logf("crash figures: %s under load and kills, %s in all", workDone.Round(time.Millisecond), time.Since(started).Round(time.Millisecond))
	if ackedAgain > 0 {
		bad = append(bad, fmt.Sprintf("%d acknowledged invocations called the upstream again after a restart", ackedAgain))
	}
	if len(bad) > 0 {
		if len(bad) > 30 {
			bad = append(bad[:30], fmt.Sprintf("… and %d more", len(bad)-30))
		}
		t.Fatalf("seed %d: %d violations:\n%s", seed, len(bad), strings.Join(bad, "\n"))
	}
}

// newUpstream is the http row's upstream: it answers the query's b after up to
// 40 ms (a killed caller goes away sooner) and records every call.
func newUpstream(t *testing.T, seed uint64) *upstreamtest.Upstream {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, 0))
	return upstreamtest.Start(t, func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		latency := time.Duration(rng.Int64N(int64(40 * time.Millisecond)))
		mu.Unlock()
		select { // the upstream's latency; a killed caller goes away
		case <-time.After(latency):
		case <-req.Context().Done():
			return
		}
		io.WriteString(w, req.URL.Query().Get("b"))
	})
}

// repeated counts the bodies up was called with more than once, and those of
// them whose invocation was acknowledged (id -> body).
func repeated(up *upstreamtest.Upstream, acked map[string]string) (n, ofAcked int) {
	bodies := map[string]bool{}
	for _, b := range acked {
		bodies[b] = true
	}
	calls := map[string]int{}
	for _, r := range up.Requests() {
		calls[r.Query().Get("b")]++
	}
	for b, c := range calls {
		if c > 1 {
			n++
			if bodies[b] {
				ofAcked++
			}
		}
	}
	return n, ofAcked
}

// spawn starts the next child on the data dir.
func (r *crashRun) spawn() *Server {
	r.t.Helper()
	r.spawns++
	s, err := Spawn(r.bin, r.dataDir, r.addr, nodetest.Key, filepath.Join(r.logDir, fmt.Sprintf("serve-%02d.log", r.spawns)))
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { s.Kill() })
	return s
}

// startReady spawns a child and waits until it answers /healthz.
func (r *crashRun) startReady() *Server {
	s := r.spawn()
	r.ready(s)
	return s
}

func (r *crashRun) ready(s *Server) {
	r.t.Helper()
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Ready(ctx); err != nil {
		r.t.Fatalf("start %d: %v", r.spawns, err)
	}
	r.lastReady = time.Since(t0)
}

// killRunning lets the clients work on a ready child for a random time, then
// holds them and kills it: the requests in flight are cut.
func (r *crashRun) killRunning(s *Server) {
	r.t.Helper()
	r.ready(s)
	r.transport.CloseIdleConnections() // the last child's connections are dead
	r.gate.Open()
	d := runMin + time.Duration(r.rng.Int64N(int64(runMax-runMin)))
	select {
	case <-time.After(d):
	case <-s.Exited():
		r.t.Fatalf("capdir serve %d exited on its own:\n%s", r.spawns, s.Tail(40))
	}
	r.gate.Close()
	if err := s.Kill(); err != nil {
		r.t.Fatal(err)
	}
	r.readyKills++
}

// killDuringStartup kills a child after a random part of the time the last one
// took to answer /healthz.
func (r *crashRun) killDuringStartup(s *Server) {
	r.t.Helper()
	var ready atomic.Bool
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if s.Ready(ctx) == nil {
			ready.Store(true)
		}
	}()
	d := time.Duration(r.rng.Int64N(int64(r.lastReady)))
	select {
	case <-time.After(d):
	case <-s.Exited():
		r.t.Fatalf("capdir serve %d exited on its own during startup:\n%s", r.spawns, s.Tail(40))
	}
	if err := s.Kill(); err != nil {
		r.t.Fatal(err)
	}
	if ready.Load() {
		r.startupKillsAfterReady++
	} else {
		r.startupKills++
	}
}

// digests is `capdir digest` of the data dir as the run left it, and again after
// `capdir replay`.
func (r *crashRun) digests() (live, replayed string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	live, err := Run(ctx, r.bin, "digest", "--data", r.dataDir)
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := Run(ctx, r.bin, "replay", "--data", r.dataDir); err != nil {
		r.t.Fatal(err)
	}
	replayed, err = Run(ctx, r.bin, "digest", "--data", r.dataDir)
	if err != nil {
		r.t.Fatal(err)
	}
	return strings.TrimSpace(live), strings.TrimSpace(replayed)
}
