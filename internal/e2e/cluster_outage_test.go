package e2e_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/crashtest"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
	"github.com/capdir/capdir/projector"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// clusterServer is one server of the sample cluster, on this run's ports and store.
type clusterServer struct {
	file            string
	name            string
	port, routePort int
	store           string
	srv             *server.Server // nil while it is down
}

func (s *clusterServer) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", s.port) }

// sampleClusterRun runs the three servers of examples/cluster in this process, each
// from its own file with only the client port, the cluster port, the routes and
// the store dir changed: accounts, users, permissions and the routes'
// authorization are the sample's.
type sampleClusterRun struct {
	t       *testing.T
	servers []*clusterServer
	// routePorts maps a route port of the sample to this run's.
	routePorts map[int]int
}

func freePortNumber(t *testing.T) int {
	t.Helper()
	_, p, _ := net.SplitHostPort(freePort(t))
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func startSampleCluster(t *testing.T) *sampleClusterRun {
	t.Helper()
	c := &sampleClusterRun{t: t, routePorts: map[int]int{}}
	for _, file := range []string{"nats-server.conf", "n2.conf", "n3.conf"} {
		opts, err := server.ProcessConfigFile(filepath.Join(sampleCluster, file))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		s := &clusterServer{file: file, name: opts.ServerName, port: freePortNumber(t), routePort: freePortNumber(t), store: t.TempDir()}
		c.routePorts[opts.Cluster.Port] = s.routePort
		c.servers = append(c.servers, s)
	}
	t.Cleanup(func() {
		for _, s := range c.servers {
			c.stop(s)
		}
	})
	for _, s := range c.servers {
		c.start(s)
	}
	c.waitCurrent()
	return c
}

// start runs s from its file on s's ports and store (again, after stop).
func (c *sampleClusterRun) start(s *clusterServer) {
	c.t.Helper()
	opts, err := server.ProcessConfigFile(filepath.Join(sampleCluster, s.file))
	if err != nil {
		c.t.Fatalf("%s: %v", s.file, err)
	}
	opts.Port, opts.Cluster.Port, opts.StoreDir = s.port, s.routePort, s.store
	routes := make([]*url.URL, 0, len(opts.Routes))
	for _, r := range opts.Routes {
		p, _ := strconv.Atoi(r.Port())
		mine, ok := c.routePorts[p]
		if !ok {
			c.t.Fatalf("%s: route %s is to no server of the sample", s.file, r.Redacted())
		}
		u := *r
		u.Host = net.JoinHostPort(r.Hostname(), strconv.Itoa(mine))
		routes = append(routes, &u)
	}
	opts.Routes = routes
	opts.NoSigs, opts.NoLog = true, true
	for _, p := range []int{s.port, s.routePort} { // a server that cannot listen only logs it (not here): say so
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			c.t.Fatalf("%s cannot listen on its port %d again: %v", s.name, p, err)
		}
		ln.Close()
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		c.t.Fatalf("%s: %v", s.file, err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(20 * time.Second) {
		srv.Shutdown()
		c.t.Fatalf("%s did not start", s.name)
	}
	s.srv = srv
}

func (c *sampleClusterRun) stop(s *clusterServer) {
	if s.srv != nil {
		s.srv.Shutdown()
		s.srv.WaitForShutdown()
		s.srv = nil
	}
}

// waitCurrent waits until the running servers agree on a JetStream meta leader
// that sees every running server.
func (c *sampleClusterRun) waitCurrent() {
	c.t.Helper()
	running := 0
	for _, s := range c.servers {
		if s.srv != nil {
			running++
		}
	}
	c.await(clusterPatience, "a JetStream meta leader seeing every running server", func() bool {
		leaders := 0
		for _, s := range c.servers {
			if s.srv == nil {
				continue
			}
			if !s.srv.JetStreamIsCurrent() {
				return false
			}
			if s.srv.JetStreamIsLeader() {
				leaders++
				if len(s.srv.JetStreamClusterPeers()) != running {
					return false
				}
			}
		}
		return leaders == 1
	})
}

func (c *sampleClusterRun) await(d time.Duration, what string, ok func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			c.t.Fatalf("no %s within %s", what, d)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, not waiting out a guess
	}
}

// urls lists every server's client URL, server i first.
func (c *sampleClusterRun) urls(i int) string {
	u := []string{c.servers[i].url()}
	for j, s := range c.servers {
		if j != i {
			u = append(u, s.url())
		}
	}
	return strings.Join(u, ",")
}

func (c *sampleClusterRun) byName(name string) *clusterServer {
	for _, s := range c.servers {
		if s.name == name {
			return s
		}
	}
	c.t.Fatalf("no server %q in the sample cluster", name)
	return nil
}

// Phases of an outage run: successes are counted per phase.
const (
	phaseBefore = iota
	phaseOutage
	phaseAfter
	phases
)

// phaseCounter counts successes per phase, and the longest time without one
// during an outage.
type phaseCounter struct {
	phase  *atomic.Int32
	n      [phases]atomic.Int64
	last   atomic.Int64 // UnixNano of the last success, or of the outage's start
	maxGap atomic.Int64
}

func (p *phaseCounter) ok() {
	ph := p.phase.Load()
	p.n[ph].Add(1)
	now := time.Now().UnixNano()
	prev := p.last.Swap(now)
	if ph != phaseOutage {
		return
	}
	for gap := now - prev; ; {
		m := p.maxGap.Load()
		if gap <= m || p.maxGap.CompareAndSwap(m, gap) {
			return
		}
	}
}

// outageStarts restarts the gap's clock.
func (p *phaseCounter) outageStarts(t0 time.Time) { p.last.Store(t0.UnixNano()) }

// outageEnds counts the time since the last success as a wait too.
func (p *phaseCounter) outageEnds(t1 time.Time) {
	for gap := t1.UnixNano() - p.last.Load(); ; {
		m := p.maxGap.Load()
		if gap <= m || p.maxGap.CompareAndSwap(m, gap) {
			return
		}
	}
}

func (p *phaseCounter) String() string {
	return fmt.Sprintf("%d before, %d during (longest wait %s), %d after", p.n[phaseBefore].Load(), p.n[phaseOutage].Load(),
		time.Duration(p.maxGap.Load()).Round(time.Millisecond), p.n[phaseAfter].Load())
}

// countingTransport counts the 2xx answers a node's HTTP clients receive.
type countingTransport struct {
	http.RoundTripper
	count *phaseCounter
}

func (c countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.RoundTripper.RoundTrip(req)
	if err == nil && resp.StatusCode/100 == 2 {
		c.count.ok()
	}
	return resp, err
}

// busLedger is what the bus clients know: the invocations whose receipt they
// received (id -> body), and the calls that ended without one.
type busLedger struct {
	mu     sync.Mutex
	acked  map[string]string
	failed int
	// unchecked counts the receipts refusing a call because the worker could not
	// learn whether its token was revoked (the log did not answer in time): the
	// gate fails closed, by design.
	unchecked int
	refused   []string
}

// runBusClient invokes crashtest.EchoKey as the sample's demo client over TCP,
// connected to urls, until ctx ends or, when enough is positive, it has that many
// receipts. A call has 10 s to get its receipt.
func runBusClient(ctx context.Context, t *testing.T, urls, tok string, id int, led *busLedger, count *phaseCounter, enough int) {
	seed, err := nats.NkeyOptionFromSeed(sampleCreds(t, "demo"))
	if err != nil {
		t.Error(err)
		return
	}
	nc, err := nats.Connect(urls, append(wire.ClientOptions("demo"), seed, nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))...)
	if err != nil {
		t.Errorf("bus client %d: %v", id, err)
		return
	}
	defer nc.Close()
	for i, got := 0, 0; ctx.Err() == nil && (enough == 0 || got < enough); i++ {
		body := fmt.Sprintf("bus %d call %d", id, i)
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		rc, err := wire.Invoke(cctx, nc, "demo", crashtest.EchoKey, body, wire.WithToken(tok))
		cancel()
		led.mu.Lock()
		switch {
		case err != nil:
			led.failed++
		case rc.OK && rc.Result == body && rc.Actor == "token:demo":
			led.acked[rc.InvocationID] = body
			count.ok()
			got++
		case rc.Status == wire.StatusFailedBeforeRun && strings.HasPrefix(rc.Result, "ERR:revocation:"):
			led.acked[rc.InvocationID] = body
			led.unchecked++
		default:
			led.refused = append(led.refused, fmt.Sprintf("bus %q: receipt %s %q by %s", body, rc.Status, rc.Result, rc.Actor))
		}
		led.mu.Unlock()
		if err != nil && ctx.Err() == nil {
			select { // a failed call (no server, an election): do not spin
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

// clusterPatience is how long the outage test waits for a condition (a leader,
// current replicas, successes on every node) before it fails: a bound for a run
// that is stuck, not a speed target. A loaded machine takes many times what a
// quiet one does (measured: a minute for what takes 20 s alone), so the test asserts
// what happened, and reports how long it took as figures.
const clusterPatience = 3 * time.Minute

// envCount reads a positive integer from the environment, def when unset.
func envCount(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: give a positive integer", name, v)
	}
	return n
}

// Three servers of the sample cluster, R3 streams, a capdir node on each (its URL
// list naming its own server first), owner HTTP clients on every node writing
// rows and invoking, and bus clients invoking with the sample's demo key. While
// they run, a server is shut down (the one most nodes are connected to, made
// leader of both streams and of the dispatch consumer first), and once every node
// and the bus clients have succeeded again without it, and at least
// CAPDIR_CLUSTER_OUTAGE_SECONDS (5) have passed, brought back on its ports and
// store. Then: in the log itself, every acknowledged invocation has one request
// and one receipt, no invocation two, and every request its receipt; every
// acknowledged write is served by every node; every node and the bus clients
// succeeded during each outage (the longest wait for a success is a figure, not a
// bound: see clusterPatience); the returning server's replicas caught up and it serves a client connected to it alone; the three
// projections have one digest, a fresh replay's. The nodes pack (--log-pack on). CAPDIR_CLUSTER_OUTAGES sets the
// number of outages (2 by default); CAPDIR_CLUSTER_LOGS=DIR writes each node's
// log there, and every goroutine's stack whenever a node (or the bus clients)
// goes 12 s without a success (stall-N-counter-M.txt, M the node's number, 4
// the bus clients).
func TestSampleClusterSurvivesAServerOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a three-server cluster under load for about 20 s (two outages); run without -short")
	}
	outages := envCount(t, "CAPDIR_CLUSTER_OUTAGES", 2)
	outageMin := time.Duration(envCount(t, "CAPDIR_CLUSTER_OUTAGE_SECONDS", 5)) * time.Second
	started := time.Now()
	c := startSampleCluster(t)
	t.Logf("cluster figures: three servers up and current in %s", time.Since(started).Round(time.Millisecond))

	up := upstreamtest.Start(t, upstreamtest.EchoQuery("b"))

	nodeCreds := sampleCreds(t, "node")
	nodes := make([]*capdir.Node, len(c.servers))
	for i, s := range c.servers {
		var opts []capdir.Option
		if dir := os.Getenv("CAPDIR_CLUSTER_LOGS"); dir != "" { // each node's log, for a run to look into
			f, err := os.Create(filepath.Join(dir, "capdir-"+s.name+".log"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			opts = append(opts, capdir.WithLogger(slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))))
		}
		nodes[i] = nodetest.Start(t, func(cfg *capdir.Config) {
			cfg.Log.NATSURL, cfg.Log.Creds, cfg.Log.Replicas = c.urls(i), nodeCreds, 3
			cfg.Name, cfg.Dispatch.Workers, cfg.Dispatch.AckWait = "capdir-"+s.name, 2, 5*time.Second
			// Packs on, as a cluster whose nodes all read them runs: a pack that
			// meets the outage is sent again until stored, once.
			cfg.Log.Pack = eventlog.PackOn
			if i > 0 {
				cfg.TokenKeyFile = nodes[0].Config().TokenKeyFile
			}
		}, opts...)
	}
	for i, n := range nodes {
		t.Logf("cluster figures: node %d connected to %s (its list: %s)", i+1, n.Log().Conn().ConnectedUrl(), c.urls(i))
	}

	var phase atomic.Int32
	ledger := crashtest.NewLedger()
	setup := &crashtest.Client{ID: -1, URL: nodes[0].URL(), Key: nodetest.Key, HTTP: http.DefaultClient, Gate: crashtest.NewGate(), Ledger: ledger}
	setup.Gate.Open()
	if o := setup.Put(context.Background(), crashtest.EchoKey); o != crashtest.Acked {
		t.Fatalf("PUT %s: %v; %v", crashtest.EchoKey, o, ledger.Anomalies())
	}
	if o := setup.PutRow(context.Background(), crashtest.SlowKey, "# WHAT: echo over http", "http", "GET "+up.URL+"/echo?b=$1"); o != crashtest.Acked {
		t.Fatalf("PUT %s: %v; %v", crashtest.SlowKey, o, ledger.Anomalies())
	}
	tok, _, err := nodes[0].Mint(token.MintRequest{Subject: "demo", Scope: token.Scope{Keys: []string{crashtest.EchoKey}}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}

	ctx, stopLoad := context.WithCancel(context.Background())
	defer stopLoad()
	var wg sync.WaitGroup
	counts := make([]*phaseCounter, len(nodes))
	refusals := &refusalWatch{}
	for i, n := range nodes {
		counts[i] = &phaseCounter{phase: &phase}
		hc := &http.Client{Transport: refusals.transport(countingTransport{&http.Transport{MaxIdleConnsPerHost: 4}, counts[i]}), Timeout: 40 * time.Second}
		for j := range 2 {
			cl := &crashtest.Client{ID: 2*i + j, URL: n.URL(), Key: nodetest.Key, HTTP: hc, Gate: setup.Gate, Ledger: ledger,
				Rng: rand.New(rand.NewPCG(uint64(started.UnixNano()), uint64(2*i+j)))}
			wg.Add(1)
			go func() {
				defer wg.Done()
				cl.Run(ctx)
			}()
		}
	}
	bus := &busLedger{acked: map[string]string{}}
	busCount := &phaseCounter{phase: &phase}
	defer func() { // a run that ends stuck names the node that was
		if t.Failed() {
			for i, n := range counts {
				t.Logf("at the failure: node %d (capdir-%s) 2xx answers: %v; reconnects %d, on %s", i+1, c.servers[i].name, n,
					nodes[i].Log().Conn().Stats().Reconnects, nodes[i].Log().Conn().ConnectedUrl())
			}
			t.Logf("at the failure: bus receipts: %v", busCount)
		}
	}()
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runBusClient(ctx, t, c.urls(i), tok, i, bus, busCount, 0)
		}()
	}

	if dir := os.Getenv("CAPDIR_CLUSTER_LOGS"); dir != "" { // a node without a success for 12 s: what every goroutine was doing
		go watchStalls(ctx, dir, append(counts, busCount))
	}
	// Load before the outage: every node answers.
	c.await(clusterPatience, "successes on every node before the outage", func() bool {
		for _, n := range counts {
			if n.n[phaseBefore].Load() < 50 {
				return false
			}
		}
		return busCount.n[phaseBefore].Load() >= 10
	})

	var outageTook, recoverTook []time.Duration
	var downNames []string
	for o := range outages {
		down, served := busiestServer(t, c, nodes)
		moveLeaders(t, c, nodes[0], down.name)
		downNames = append(downNames, down.name)
		marks := make([]int64, len(counts))
		for i, n := range counts {
			marks[i] = n.n[phaseOutage].Load()
		}
		busMark := busCount.n[phaseOutage].Load()
		t0 := time.Now()
		for _, n := range append(counts, busCount) {
			n.outageStarts(t0)
		}
		phase.Store(phaseOutage)
		t.Logf("cluster figures: outage %d: %s down at %s", o+1, down.name, t0.Format("15:04:05.000"))
		c.stop(down)
		// Every node serves again without it, its own node included.
		c.await(clusterPatience, fmt.Sprintf("successes on every node while %s is down", down.name), func() bool {
			for i, n := range counts {
				if n.n[phaseOutage].Load()-marks[i] < 20 {
					return false
				}
			}
			return busCount.n[phaseOutage].Load()-busMark >= 5 && time.Since(t0) > outageMin
		})
		t1 := time.Now()
		outageTook = append(outageTook, t1.Sub(t0))
		for _, n := range append(counts, busCount) {
			n.outageEnds(t1)
		}
		c.start(down)
		c.waitCurrent()
		waitReplicasCurrent(t, c, nodes[0])
		recoverTook = append(recoverTook, time.Since(t1))
		phase.Store(phaseAfter)
		t.Logf("cluster figures: outage %d: %s (leader of both streams and the dispatch consumer, serving %d nodes) down %s, back and current %s later; successes so far: nodes %v, bus %v",
			o+1, down.name, served[down.name], outageTook[o].Round(time.Millisecond), recoverTook[o].Round(time.Millisecond), counts, busCount)

		// The returning server serves a bus client connected to it alone.
		onlyBus := &busLedger{acked: map[string]string{}}
		bctx, bcancel := context.WithTimeout(ctx, clusterPatience)
		runBusClient(bctx, t, down.url(), tok, 100+o, onlyBus, &phaseCounter{phase: &phase}, 3)
		bcancel()
		bus.mu.Lock()
		for k, v := range onlyBus.acked {
			bus.acked[k] = v
		}
		bus.mu.Unlock()
		if len(onlyBus.acked) == 0 {
			t.Fatalf("no receipt for a bus client connected to %s alone after it came back (%d failed calls)", down.name, onlyBus.failed)
		}
		phase.Store(phaseBefore)
	}
	// Load after the last return.
	phase.Store(phaseAfter)
	marks := make([]int64, len(counts))
	for i, n := range counts {
		marks[i] = n.n[phaseAfter].Load()
	}
	c.await(clusterPatience, "successes on every node after the outage", func() bool {
		for i, n := range counts {
			if n.n[phaseAfter].Load()-marks[i] < 50 {
				return false
			}
		}
		return true
	})
	stopLoad()
	wg.Wait()
	loadTook := time.Since(started)

	// Every request has had its chance: the consumer is idle, every projection
	// has folded the whole log.
	nodetest.WaitDispatchIdle(t, nodes[0].Log())
	for _, n := range nodes {
		if err := nodetest.CatchUp(context.Background(), n); err != nil {
			t.Fatal(err)
		}
	}
	var bad []string
	bad = append(bad, ledger.Anomalies()...)
	bad = append(bad, bus.refused...)
	bad = append(bad, refusals.violations()...)
	rows := 0
	for i, n := range nodes {
		served, err := crashtest.Served(context.Background(), http.DefaultClient, n.URL(), nodetest.Key)
		if err != nil {
			t.Fatal(err)
		}
		rows = len(served)
		for _, b := range ledger.CheckRows(served) {
			bad = append(bad, fmt.Sprintf("node %d: %s", i+1, b))
		}
	}
	acked := ledger.Invoked()
	busAcked := len(bus.acked)
	for k, v := range bus.acked {
		acked[k] = v
	}
	count, err := crashtest.Count(context.Background(), nodes[0].Log())
	if err != nil {
		t.Fatal(err)
	}
	bad = append(bad, count.Check(acked, true)...)
	digests := make([]string, len(nodes))
	for i, n := range nodes {
		if digests[i], err = n.Projector().Digest(); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "replayed.db")
	if err := projector.Rebuild(context.Background(), projector.Config{Path: path, Log: nodes[0].Log(), Breaker: nodes[0].Config().Breaker}, nil); err != nil {
		t.Fatal(err)
	}
	replayed, err := projector.FileDigest(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range digests {
		if d != replayed {
			bad = append(bad, fmt.Sprintf("node %d's projection digest %s; a fresh replay's %s", i+1, d, replayed))
		}
	}

	writes := ledger.Count("POST", crashtest.Acked) + ledger.Count("PUT", crashtest.Acked)
	t.Logf("cluster figures: %d outages (%s), %s under load in all", outages, strings.Join(downNames, ", "), loadTook.Round(time.Millisecond))
	t.Logf("cluster figures: owner HTTP: writes acknowledged %d, unanswered %d; invocations acknowledged %d, unanswered %d; bus (demo key): receipts %d (%d of them ERR:revocation: the log did not answer the worker's revocation lookup), calls without one %d",
		writes, ledger.Count("POST", crashtest.Unknown)+ledger.Count("PUT", crashtest.Unknown),
		len(acked)-busAcked, ledger.Count("dispatch", crashtest.Unknown), busAcked, bus.unchecked, bus.failed)
	for i, n := range counts {
		packs, packed := nodes[i].Log().Packs()
		t.Logf("cluster figures: node %d (capdir-%s) 2xx answers: %v; reconnects %d, now on %s; async appends never acknowledged %d; %d packs of %d events", i+1, c.servers[i].name, n,
			nodes[i].Log().Conn().Stats().Reconnects, nodes[i].Log().Conn().ConnectedUrl(), nodes[i].Log().JetStream().PublishAsyncPending(), packs, packed)
	}
	t.Logf("cluster figures: bus receipts: %v", busCount)
	t.Logf("cluster figures: log: %d events, %d requests, %d receipts; %d rows; digest %s on the three nodes and after a replay",
		count.Events, len(count.Requests), count.ReceiptTotal(), rows, replayed)
	if len(bad) > 0 {
		if len(bad) > 30 {
			bad = append(bad[:30], fmt.Sprintf("… and %d more", len(bad)-30))
		}
		t.Fatalf("%d violations:\n%s", len(bad), strings.Join(bad, "\n"))
	}
	// The checks are done: stop the nodes here rather than replay three times
	// more at cleanup.
	for _, n := range nodes {
		sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if err := n.Stop(sctx); err != nil {
			t.Errorf("stop %s: %v", n.Config().Name, err)
		}
		cancel()
	}
}

// busiestServer is the server most nodes are connected to (nats.go shuffles a URL
// list: a node's first URL is not where it connects), and how many each serves.
func busiestServer(t *testing.T, c *sampleClusterRun, nodes []*capdir.Node) (*clusterServer, map[string]int) {
	t.Helper()
	served := map[string]int{}
	var best *clusterServer
	for _, n := range nodes {
		for _, s := range c.servers {
			if n.Log().Conn().ConnectedUrl() == s.url() {
				served[s.name]++
				if best == nil || served[s.name] > served[best.name] {
					best = s
				}
			}
		}
	}
	if best == nil {
		t.Fatal("no node is connected to a server of the cluster")
	}
	return best, served
}

// moveLeaders makes server the leader of both streams and of the dispatch
// consumer (a leader stepdown naming it as the preferred successor), so that its
// outage is the one that disturbs the most.
func moveLeaders(t *testing.T, c *sampleClusterRun, n *capdir.Node, server string) {
	t.Helper()
	js := n.Log().JetStream()
	groups := map[string]func(ctx context.Context) (*jetstream.ClusterInfo, error){}
	for _, name := range wire.Streams {
		groups["$JS.API.STREAM.LEADER.STEPDOWN."+name] = func(ctx context.Context) (*jetstream.ClusterInfo, error) {
			s, err := js.Stream(ctx, name)
			if err != nil {
				return nil, err
			}
			si, err := s.Info(ctx)
			if err != nil {
				return nil, err
			}
			return si.Cluster, nil
		}
	}
	groups["$JS.API.CONSUMER.LEADER.STEPDOWN."+wire.DataStream+"."+dispatcher.ConsumerName] = func(ctx context.Context) (*jetstream.ClusterInfo, error) {
		cons, err := js.Consumer(ctx, wire.DataStream, dispatcher.ConsumerName)
		if err != nil {
			return nil, err
		}
		ci, err := cons.Info(ctx)
		if err != nil {
			return nil, err
		}
		return ci.Cluster, nil
	}
	body := fmt.Sprintf(`{"placement":{"preferred":%q}}`, server)
	for subject, info := range groups {
		c.await(clusterPatience, server+" leading "+subject, func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			ci, err := info(ctx)
			if err != nil || ci == nil {
				return false
			}
			if ci.Leader == server {
				return true
			}
			n.Log().Conn().RequestWithContext(ctx, subject, []byte(body)) // answered by an error while an election runs: ask again
			return false
		})
	}
}

// waitReplicasCurrent waits until every replica of both streams and of the
// dispatch consumer is current, with nothing left to catch up.
func waitReplicasCurrent(t *testing.T, c *sampleClusterRun, n *capdir.Node) {
	t.Helper()
	js := n.Log().JetStream()
	c.await(clusterPatience, "current replicas of the streams and the dispatch consumer", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		for _, name := range wire.Streams {
			s, err := js.Stream(ctx, name)
			if err != nil {
				return false
			}
			si, err := s.Info(ctx)
			if err != nil || !replicasCurrent(si.Cluster) {
				return false
			}
		}
		cons, err := js.Consumer(ctx, wire.DataStream, dispatcher.ConsumerName)
		if err != nil {
			return false
		}
		ci, err := cons.Info(ctx)
		return err == nil && replicasCurrent(ci.Cluster)
	})
}

func replicasCurrent(ci *jetstream.ClusterInfo) bool {
	if ci == nil || ci.Leader == "" || len(ci.Replicas) != 2 {
		return false
	}
	for _, r := range ci.Replicas {
		if !r.Current || r.Offline || r.Lag != 0 {
			return false
		}
	}
	return true
}

// watchStalls writes every goroutine's stack to dir once a counter has gone 12 s
// without a success while the load runs, once a stall.
func watchStalls(ctx context.Context, dir string, counts []*phaseCounter) {
	dumped := make([]int64, len(counts))
	for n := 0; ; {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		for i, c := range counts {
			last := c.last.Load()
			if last == 0 || dumped[i] == last || time.Since(time.Unix(0, last)) < 12*time.Second {
				continue
			}
			dumped[i] = last
			n++
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("stall-%d-counter-%d.txt", n, i+1)))
			if err != nil {
				continue
			}
			fmt.Fprintf(f, "counter %d: no success since %s\n\n", i+1, time.Unix(0, last).Format("15:04:05.000"))
			pprof.Lookup("goroutine").WriteTo(f, 2)
			f.Close()
		}
	}
}
