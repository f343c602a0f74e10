//go:build unix

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/crashtest"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// killCluster is the sample cluster as real processes: three nats-server
// children run from files that include examples/cluster/nats-server.conf (only
// names, ports, routes and store dirs changed), and a `capdir serve` child per
// server, each with every server's URL, the sample's node key and R3 streams.
type killCluster struct {
	t         *testing.T
	dir       string
	natsBin   string
	capdirBin string
	creds     string // the sample's node key
	tokenKey  string // one signing key for the three nodes
	logs      string // where the children write their output
	urls      string
	nats      []*killChild
	nodes     []*killChild
}

// killChild is one child process and what it needs to start again.
type killChild struct {
	name string
	args []string // nats: the conf; capdir: data dir, address, serve flags
	port int      // nats: its client port
	srv  *crashtest.Server
}

// nodeTagEnv is set, in each capdir child's environment, to the child's name: a
// row whose auth names it tells its upstream which node called.
const nodeTagEnv = "E2E_NODE_TOKEN"

// startKillCluster starts the cluster; extra are further serve flags of every
// capdir node.
func startKillCluster(t *testing.T, extra ...string) *killCluster {
	t.Helper()
	c := &killCluster{t: t, dir: t.TempDir(), creds: sampleCreds(t, "node")}
	c.tokenKey = filepath.Join(c.dir, "token-signing.pem")
	if c.logs = os.Getenv("CAPDIR_CLUSTER_LOGS"); c.logs == "" { // each child's output, for a run to look into
		c.logs = c.dir
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var err error
	if c.natsBin, err = crashtest.BuildNATSServer(ctx, c.dir); err != nil {
		t.Fatal(err)
	}
	if c.capdirBin, err = crashtest.Build(ctx, c.dir); err != nil {
		t.Fatal(err)
	}
	// An include names a file beside the including one.
	sample, err := os.ReadFile(filepath.Join(sampleCluster, "nats-server.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.dir, "sample.conf"), sample, 0o600); err != nil {
		t.Fatal(err)
	}
	ports, routePorts := make([]int, 3), make([]int, 3)
	for i := range ports {
		ports[i], routePorts[i] = freePortNumber(t), freePortNumber(t)
	}
	var routes, urls []string
	for i := range ports {
		routes = append(routes, fmt.Sprintf("nats-route://route:example-route-password@127.0.0.1:%d", routePorts[i]))
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", ports[i]))
	}
	c.urls = strings.Join(urls, ",")
	for i := range ports {
		name := fmt.Sprintf("n%d", i+1)
		conf := filepath.Join(c.dir, name+".conf")
		text := fmt.Sprintf("include sample.conf\nserver_name: %s\nlisten: 127.0.0.1:%d\njetstream { store_dir: %q }\n"+
			"cluster {\n  name: capdir\n  listen: 127.0.0.1:%d\n  authorization { user: route, password: \"example-route-password\" }\n  routes: [\n    %s\n  ]\n}\n",
			name, ports[i], filepath.Join(c.dir, "store-"+name), routePorts[i], strings.Join(routes, "\n    "))
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		c.nats = append(c.nats, &killChild{name: name, args: []string{conf}, port: ports[i]})
	}
	t.Cleanup(func() {
		for _, n := range append(c.nodes, c.nats...) {
			if n.srv != nil {
				n.srv.Kill()
			}
		}
	})
	for _, n := range c.nats {
		c.startNATS(n)
	}
	c.waitJetStream()
	for i := range 3 {
		name := fmt.Sprintf("capdir-n%d", i+1)
		addr, err := crashtest.FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		n := &killChild{name: name, args: []string{filepath.Join(c.dir, name), addr,
			"--nats-url", c.urls, "--nats-creds", c.creds, "--replicas", "3", "--token-key", c.tokenKey, "--workers", "4"}}
		n.args = append(n.args, extra...)
		c.nodes = append(c.nodes, n)
		c.startNode(n) // one at a time: the first creates the streams and the signing key
	}
	return c
}

func (c *killCluster) startNATS(n *killChild) {
	c.t.Helper()
	srv, err := crashtest.SpawnNATS(c.natsBin, n.args[0], filepath.Join(c.logs, n.name+fmt.Sprintf(".%d.log", time.Now().UnixNano())))
	if err != nil {
		c.t.Fatal(err)
	}
	n.srv = srv
	c.await(30*time.Second, n.name+" listening", func() bool {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", n.port), 100*time.Millisecond)
		if err == nil {
			conn.Close()
		}
		return err == nil
	})
}

func (c *killCluster) startNode(n *killChild) {
	c.t.Helper()
	srv, err := crashtest.SpawnEnv(c.capdirBin, n.args[0], n.args[1], nodetest.Key,
		filepath.Join(c.logs, n.name+fmt.Sprintf(".%d.log", time.Now().UnixNano())), []string{nodeTagEnv + "=" + n.name}, n.args[2:]...)
	if err != nil {
		c.t.Fatal(err)
	}
	n.srv = srv
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := srv.Ready(ctx); err != nil {
		c.t.Fatal(err)
	}
}

// waitJetStream waits until the cluster answers JetStream requests (it has a meta
// leader).
func (c *killCluster) waitJetStream() {
	c.t.Helper()
	nc := c.connect()
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		c.t.Fatal(err)
	}
	c.await(60*time.Second, "a JetStream meta leader", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := js.AccountInfo(ctx)
		return err == nil
	})
}

// connect connects to the cluster with the node key.
func (c *killCluster) connect() *nats.Conn {
	c.t.Helper()
	seed, err := nats.NkeyOptionFromSeed(c.creds)
	if err != nil {
		c.t.Fatal(err)
	}
	nc, err := nats.Connect(c.urls, seed, nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		c.t.Fatal(err)
	}
	return nc
}

func (c *killCluster) await(d time.Duration, what string, ok func() bool) {
	c.t.Helper()
	end := time.Now().Add(d)
	for !ok() {
		if time.Now().After(end) {
			c.dumpLogs()
			c.t.Fatalf("no %s within %s", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// dumpLogs writes the last lines of every capdir child's output to the test's
// log, so that a run that stalls says what its nodes were doing (the files
// themselves go with the test's temp dir unless CAPDIR_CLUSTER_LOGS keeps them).
func (c *killCluster) dumpLogs() {
	paths, _ := filepath.Glob(filepath.Join(c.logs, "capdir-n*.log"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		lines = lines[max(0, len(lines)-40):]
		c.t.Logf("the last %d lines of %s:\n%s", len(lines), filepath.Base(p), strings.Join(lines, "\n"))
	}
}

// owner sends an owner request to node i and returns its status and body.
func (c *killCluster) owner(i int, method, path, body string) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.nodes[i].srv.URL+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("x-terminal-key", nodetest.Key)
	req.Header.Set("content-type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// retryLedger is what the retrying bus clients know: per invocation id they chose,
// the receipt they got (its status and whether its result was theirs), and the
// ids they gave up on.
type retryLedger struct {
	mu      sync.Mutex
	given   map[string]wire.Receipt
	sends   int
	resends int
	gaveUp  []string
}

func (l *retryLedger) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.given)
}

// runRetryingBusClient invokes key as the sample's demo client, each call under an
// invocation id it chooses, and sends a call again under the same id (a new
// request event) whenever no receipt came within 3 s, until it gets one or the
// retry budget ends. It starts no new call once ctx ends.
func runRetryingBusClient(ctx context.Context, t *testing.T, urls, key, tok string, id int, led *retryLedger) {
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
	for i := 0; ctx.Err() == nil; i++ {
		inv := fmt.Sprintf("inv_k9_%d_%d", id, i)
		give := time.Now().Add(retryBudget)
		for try := 0; ; try++ {
			cctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			rc, err := wire.Invoke(cctx, nc, "demo", key, inv, wire.WithToken(tok), wire.WithInvocationID(inv))
			cancel()
			led.mu.Lock()
			led.sends++
			if try > 0 {
				led.resends++
			}
			if err == nil {
				led.given[inv] = rc
			} else if time.Now().After(give) {
				led.gaveUp = append(led.gaveUp, fmt.Sprintf("%s: %v", inv, err))
			}
			led.mu.Unlock()
			if err == nil || time.Now().After(give) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// retryBudget is how long a bus client sends one call again before it gives up:
// longer than the dispatch consumer's ack wait (30 s), after which the request a
// killed node held is delivered again.
const retryBudget = 90 * time.Second

// A NATS server of the three and a capdir node are killed with SIGKILL under load
// from bus clients that choose their invocation ids and send a call again under
// the same id when its receipt is late; then both are started again on their
// stores. An acknowledged invocation never runs twice: a local upstream records
// its calls per invocation id, and none comes after the invocation's receipt is in
// the log (a call a kill cut before its receipt was stored may run again: its
// caller had nothing yet). Every id a client was given is in the log (read from the data stream
// itself, once the dispatch consumer is idle) with its request and exactly one
// receipt; no invocation has two receipts; every request has its receipt.
// CAPDIR_CLUSTER_KILLS sets the number of rounds (1 by default), each killing the
// next server and the node after it; CAPDIR_CLUSTER_LOGS=DIR keeps the children's
// output there; CAPDIR_CLUSTER_FLAGS adds serve flags to every node's (such as
// "--log-group-commit on").
func TestClusterSurvivesKill9OfAServerAndANode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds nats-server and capdir and kills them under load for about a minute; run without -short")
	}
	rounds := envCount(t, "CAPDIR_CLUSTER_KILLS", 1)
	began := time.Now()
	c := startKillCluster(t, strings.Fields(os.Getenv("CAPDIR_CLUSTER_FLAGS"))...)
	t.Logf("kill -9 figures: three servers and three nodes up in %s", time.Since(began).Round(time.Millisecond))

	us := upstreamtest.Start(t, upstreamtest.EchoQuery("b"))
	const key = "K9_ECHO"
	row, _ := json.Marshal(map[string]string{"key": key, "type": "http", "target": "GET " + us.URL + "/echo?b=$1", "content": "# WHAT: echo over http"})
	if code, body := c.owner(0, "PUT", "/api/directory/"+key, string(row)); code != 201 && code != 200 {
		t.Fatalf("PUT %s: %d %s", key, code, body)
	}
	code, body := c.owner(0, "POST", "/api/tokens", `{"sub":"demo","scope":{"keys":["`+key+`"]},"ttl_seconds":3600}`)
	var minted struct {
		Token string `json:"token"`
	}
	if code != 201 && code != 200 || json.Unmarshal([]byte(body), &minted) != nil || minted.Token == "" {
		t.Fatalf("POST /api/tokens: %d %s", code, body)
	}

	led := &retryLedger{given: map[string]wire.Receipt{}}
	ctx, stopLoad := context.WithCancel(context.Background())
	defer stopLoad()
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runRetryingBusClient(ctx, t, c.urls, key, minted.Token, i, led)
		}()
	}
	// A client whose call the killed node held hears nothing until the ack wait
	// (30 s) hands the call to another node, and an election of the stream's or
	// the consumer's leader may come on top: under the race detector on a loaded
	// machine that took longer than a minute once. The bound is for a stall, not
	// a measure of speed.
	progress := func(n int, what string) {
		t.Helper()
		mark := led.len()
		c.await(2*retryBudget, fmt.Sprintf("%d more receipts %s", n, what), func() bool { return led.len()-mark >= n })
	}
	progress(30, "before the kills")
	for r := range rounds {
		srv, node := c.nats[r%3], c.nodes[(r+1)%3]
		t.Logf("kill -9 figures: round %d: %s killed at %s", r+1, srv.name, time.Now().Format("15:04:05.000"))
		srv.srv.Kill()
		time.Sleep(time.Second) // calls in flight meet the lost server
		t.Logf("kill -9 figures: round %d: %s killed at %s", r+1, node.name, time.Now().Format("15:04:05.000"))
		node.srv.Kill()
		progress(10, "with a server and a node killed")
		c.startNATS(srv)
		c.startNode(node)
		progress(10, "after the restarts")
	}
	stopLoad()
	wg.Wait()
	t.Logf("kill -9 figures: load over after %s", time.Since(began).Round(time.Millisecond))

	l, err := eventlog.Open(context.Background(), eventlog.Config{DataDir: filepath.Join(c.dir, "audit"), NATSURL: c.urls, Creds: c.creds, Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	nodetest.WaitDispatchIdle(t, l)
	count, err := crashtest.Count(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	led.mu.Lock()
	defer led.mu.Unlock()
	upCalls := map[string][]time.Time{} // when each call per b came
	for _, r := range us.Requests() {
		b := r.Query().Get("b")
		upCalls[b] = append(upCalls[b], r.At)
	}
	var bad []string
	ok, again, cut := 0, 0, 0
	for inv, rc := range led.given {
		if count.Requests[inv] == 0 || count.Receipts[inv] != 1 {
			bad = append(bad, fmt.Sprintf("invocation %s, given to its caller: %d requests and %d receipts in the log; want its request and 1 receipt",
				inv, count.Requests[inv], count.Receipts[inv]))
		}
		if !rc.OK || rc.Result != "HTTP 200:"+inv { // the http runner's answer of the upstream's echo
			continue
		}
		ok++
		// A call a kill cut before its receipt was stored may run again (its
		// caller had nothing yet); none may come once the receipt is in the log.
		calls := upCalls[inv]
		if len(calls) == 0 {
			bad = append(bad, fmt.Sprintf("acknowledged invocation %s has its result and never reached the upstream", inv))
			continue
		}
		if len(calls) > 1 {
			cut++
		}
		if last := calls[len(calls)-1]; last.After(count.Finished[inv]) {
			bad = append(bad, fmt.Sprintf("acknowledged invocation %s reached the upstream at %s, after its receipt (finished %s) was in the log; %d calls in all",
				inv, last.Format("15:04:05.000"), count.Finished[inv].Format("15:04:05.000"), len(calls)))
			again++
		}
	}
	for inv, n := range count.Receipts {
		if n > 1 || count.Requests[inv] == 0 {
			bad = append(bad, fmt.Sprintf("invocation %s: %d receipts, %d requests in the log", inv, n, count.Requests[inv]))
		}
	}
	for inv := range count.Requests {
		if count.Receipts[inv] == 0 {
			bad = append(bad, fmt.Sprintf("request %s never got its receipt", inv))
		}
	}
	sort.Strings(bad)
	calls := 0
	for _, c := range upCalls {
		calls += len(c)
	}
	t.Logf("kill -9 figures: %d rounds; %d calls sent (%d of them again under their id), %d ids given a receipt (%d with their result), %d given up; "+
		"log: %d requests of %d invocations, %d receipts; upstream: %d calls; %d acknowledged invocations called again after their receipt was in the log, %d called again after a kill cut their first call",
		rounds, led.sends, led.resends, len(led.given), ok, len(led.gaveUp), sumCounts(count.Requests), len(count.Requests), count.ReceiptTotal(), calls, again, cut)
	for _, g := range led.gaveUp {
		t.Logf("gave up: %s", g)
	}
	if len(bad) > 0 {
		t.Fatalf("%d violations:\n%s", len(bad), strings.Join(bad, "\n"))
	}
}

func sumCounts(m map[string]int) (n int) {
	for _, v := range m {
		n += v
	}
	return n
}
