package e2e_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner/agentrunner/agenttest"
	"github.com/capdir/capdir/dispatcher/runner/httprunner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// A credential's value goes to its row's origin and nowhere else: one node, every
// auth form, every kind of upstream answer, every entry point; then every byte the
// node wrote (its data dir), logged or answered is searched for every secret in
// every encoding it could take, and every request any other server received.

// The entry points: owner HTTP, token HTTP, a bus client's request subject (raw
// requests, and wire.Invoke over its own NATS connection), MCP (owner and token,
// both session modes: secrets_leak_entry_test.go). The CLI's output is
// cmd/capdir's TestInvokeNeverPrintsASecret.

// leakSecrets are the test's credentials: distinctive values, one (odd) holding
// characters that URLs and JSON escape, and whose basic credential's base64
// holds '+' and '/', which URLs escape.
type leakSecrets struct {
	bearer, header, oauth, odd, agent string
	refused, owner                    string // never readable by a row
}

func newLeakSecrets(t *testing.T) leakSecrets {
	raw := make([]byte, 8)
	if _, err := rand.Read(raw); err != nil {
		t.Fatal(err)
	}
	h := hex.EncodeToString(raw)
	return leakSecrets{
		bearer: "s3cr3t-" + h + "-bearer", header: "s3cr3t-" + h + "-header", oauth: "s3cr3t-" + h + "-oauth",
		odd: "s3cr3t-" + h + `-odd a b&c<d>"e' /?~>`, agent: "s3cr3t-" + h + "-agent", refused: "s3cr3t-" + h + "-refused",
		owner: nodetest.Key,
	}
}

// env is the process environment the node reads credentials from: the allowed
// variables, one outside the allow-list, and capdir's own owner key.
func (s leakSecrets) env() map[string]string {
	return map[string]string{
		"LEAK_BEARER_TOKEN": s.bearer, "LEAK_HEADER_API_KEY": s.header, "LEAK_OAUTH_TOKEN": s.oauth,
		"LEAK_ODD_TOKEN": s.odd, "LEAK_AGENT_API_KEY": s.agent,
		"DB_PASSWORD": s.refused, "CAPDIR_TERMINAL_KEY": s.owner,
	}
}

func (s leakSecrets) all() []nodetest.Secret {
	env := s.env()
	out := make([]nodetest.Secret, 0, len(env))
	for name, v := range env {
		out = append(out, nodetest.Secret{Name: name, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// except is every secret but the named ones.
func except(all []nodetest.Secret, names ...string) []nodetest.Secret {
	var out []nodetest.Secret
	for _, s := range all {
		if !contains(names, s.Name) {
			out = append(out, s)
		}
	}
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// leakAuths are the auth forms, each a row per kind of upstream answer.
var leakAuths = []struct{ name, auth string }{
	{"BEARER", "bearer:LEAK_BEARER_TOKEN"},
	{"BASIC", "basic:LEAK_ODD_TOKEN"},
	{"HEADERS", `headers:{"X-Api-Key":"$LEAK_HEADER_API_KEY","X-Odd":"odd $LEAK_ODD_TOKEN"}`},
	{"QUERY", "query:key=LEAK_ODD_TOKEN"},
	{"OAUTH", "oauth:LEAK_OAUTH_TOKEN"},
}

// leakTargets are the kinds of upstream answer: an echo of everything received,
// 401 with an echo, a redirect (through the row's origin) to another origin, a
// body over the response cap, and a port nothing listens on.
var leakTargets = []string{"ECHO", "DENY", "REDIRECT", "HUGE", "CLOSED"}

// seen is one request a test server received.
type seen struct {
	server string
	method string
	uri    string
	header http.Header
	body   []byte
}

// dump is everything r carried, as text.
func (r seen) dump() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s\n", r.method, r.uri)
	keys := make([]string, 0, len(r.header))
	for k := range r.header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(r.header[k], ", "))
	}
	b.Write(r.body)
	return b.Bytes()
}

// seenOf is the request an answer of a test server is given.
func seenOf(server string, r *http.Request) seen {
	body, _ := io.ReadAll(r.Body)
	return seen{server: server, method: r.Method, uri: r.RequestURI, header: r.Header.Clone(), body: body}
}

// recorded is every request u received, as server.
func recorded(server string, u *upstreamtest.Upstream) []seen {
	var out []seen
	for _, r := range u.Requests() {
		out = append(out, seen{server: server, method: r.Method, uri: r.RequestURI, header: r.Header, body: []byte(r.Body)})
	}
	return out
}

// echoBody is r echoed back: as JSON (encoding/json, HTML-escaped) and as text.
func echoBody(r seen) []byte {
	j, _ := json.Marshal(map[string]any{"method": r.method, "uri": r.uri, "header": r.header, "body": string(r.body)})
	return append(append(j, '\n'), r.dump()...)
}

// credentialEcho is the credential-bearing parts of what r received, decoded.
func credentialEcho(r *http.Request) string {
	return "auth=" + r.Header.Get("Authorization") + " api=" + r.Header.Get("X-Api-Key") +
		" odd=" + r.Header.Get("X-Odd") + " key=" + r.URL.Query().Get("key")
}

// newLeakUpstream is the rows' origin. /redirect/ sends the call to /hop/ on the
// same origin, which sends it to other; both locations carry the credential it
// received, path- and query-escaped, as an upstream that echoes it would.
func newLeakUpstream(t *testing.T, other string) *upstreamtest.Upstream {
	mux := http.NewServeMux()
	mux.HandleFunc("/echo/", func(w http.ResponseWriter, r *http.Request) {
		w.Write(echoBody(seenOf("upstream", r)))
	})
	mux.HandleFunc("/deny/", func(w http.ResponseWriter, r *http.Request) {
		got := seenOf("upstream", r)
		w.WriteHeader(http.StatusUnauthorized)
		w.Write(echoBody(got))
	})
	mux.HandleFunc("/redirect/", func(w http.ResponseWriter, r *http.Request) {
		e := credentialEcho(r)
		http.Redirect(w, r, "/hop/"+url.PathEscape(e)+"?echo="+url.QueryEscape(e), http.StatusFound)
	})
	mux.HandleFunc("/hop/", func(w http.ResponseWriter, r *http.Request) {
		e := credentialEcho(r) + " via=" + strings.TrimPrefix(r.URL.Path, "/hop/")
		http.Redirect(w, r, other+"/landing/"+url.PathEscape(e)+"?echo="+url.QueryEscape(e), http.StatusFound)
	})
	mux.HandleFunc("/huge/", func(w http.ResponseWriter, r *http.Request) {
		e := echoBody(seenOf("upstream", r))
		for n := 0; n <= httprunner.DefaultMaxResponseBytes; n += len(e) {
			w.Write(e)
		}
	})
	return upstreamtest.Start(t, mux.ServeHTTP)
}

// said is one answer of the node (or a receipt read off the bus).
type said struct {
	what string
	body []byte
}

// leakClient talks to the node and keeps every answer, headers and body.
type leakClient struct {
	t    *testing.T
	n    *capdir.Node
	mu   sync.Mutex // said, for callers at once
	said []said
}

// do sends the request with the header pairs kv and returns the status and body.
func (c *leakClient) do(method, path, body string, kv ...string) (int, string) {
	c.t.Helper()
	code, out, err := c.send(method, path, body, kv...)
	if err != nil {
		c.t.Fatal(err)
	}
	return code, out
}

// send is do for a caller that is not the test's goroutine: it fails nothing.
func (c *leakClient) send(method, path, body string, kv ...string) (int, string, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.n.URL()+path, rd)
	if err != nil {
		return 0, "", err
	}
	if body != "" {
		req.Header.Set("content-type", "application/json")
	}
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", fmt.Errorf("%s %s: %v", method, path, err)
	}
	var hdr bytes.Buffer
	resp.Header.Write(&hdr)
	c.mu.Lock()
	c.said = append(c.said, said{what: method + " " + path, body: append(hdr.Bytes(), b...)})
	c.mu.Unlock()
	return resp.StatusCode, string(b), nil
}

// leakAnswer is what the test reads of a dispatch answer.
type leakAnswer struct {
	OK           bool   `json:"ok"`
	Ran          bool   `json:"ran"`
	Result       string `json:"result"`
	InvocationID string `json:"invocation_id"`
	Proof        struct {
		InvocationID string `json:"invocation_id"`
		Status       string `json:"status"`
	} `json:"proof"`
}

func (a leakAnswer) id() string {
	if a.Proof.InvocationID != "" {
		return a.Proof.InvocationID
	}
	return a.InvocationID
}

// dispatch POSTs {"key","body","shape"} with the header pairs kv and returns the
// decoded answer.
func (c *leakClient) dispatch(key, body string, shape bool, kv ...string) leakAnswer {
	c.t.Helper()
	a, err := c.tryDispatch(key, body, shape, kv...)
	if err != nil {
		c.t.Fatal(err)
	}
	return a
}

// tryDispatch is dispatch for a caller that is not the test's goroutine.
func (c *leakClient) tryDispatch(key, body string, shape bool, kv ...string) (leakAnswer, error) {
	in, _ := json.Marshal(map[string]any{"key": key, "body": body, "shape": shape})
	code, out, err := c.send("POST", "/api/dispatch", string(in), kv...)
	if err != nil {
		return leakAnswer{}, err
	}
	var a leakAnswer
	if err := json.Unmarshal([]byte(out), &a); err != nil || a.id() == "" {
		return leakAnswer{}, fmt.Errorf("dispatch %s (shape %v): %d %s", key, shape, code, out)
	}
	return a, nil
}

func TestSecretsNeverLeaveTheirOrigin(t *testing.T) {
	w := newLeakWorld(t)
	w.addRows()
	w.addRefusedRows()
	w.callAsOwner()
	w.callWithToken()
	stopWatch := w.watchNotices()
	w.callOverTheBus()
	w.callWithTheBusClient()
	stopWatch()
	w.callOverMCP()
	w.checkOutcomes()
	w.readEverything()
	w.stop()
	w.assertNothingLeaked()
	w.assertEachOriginGotItsOwn()
}

// leakWorld is the node of TestSecretsNeverLeaveTheirOrigin, the servers around
// it, and what the test has seen so far.
type leakWorld struct {
	t      *testing.T
	sec    leakSecrets
	canary string // a call body: it must be readable in the data dir

	up, other        *upstreamtest.Upstream // each records every request it received
	closed           string                 // an address nothing listens on
	model, denyModel *agenttest.Server
	logs             *nodetest.Buffer
	n                *capdir.Node
	cl               *leakClient

	keys    []string
	refused map[string]string // rows naming variables no row may read, by key
	owner   []string          // the owner's header
	bearer  []string          // a token holder's header
	token   string            // that token, for the bus client's requests
	bus     *busClient        // a bus client, leakBusClient
	ids     []string          // every invocation
	results map[string]leakAnswer
	// events is every event of the log as read back, each on its subject: the
	// store's bytes do not show a packed event's, since a pack is stored
	// compressed. packed counts the events read out of packs.
	events []byte
	packed int
}

func newLeakWorld(t *testing.T) *leakWorld {
	w := &leakWorld{t: t, sec: newLeakSecrets(t), logs: &nodetest.Buffer{}, results: map[string]leakAnswer{},
		owner: []string{"x-terminal-key", nodetest.Key}}
	if b64 := base64.StdEncoding.EncodeToString([]byte(w.sec.odd + ":")); !strings.Contains(b64, "+") || !strings.Contains(b64, "/") {
		t.Fatalf("the basic credential %s should hold '+' and '/'", b64)
	}
	raw := make([]byte, 8)
	rand.Read(raw)
	w.canary = "canary-" + hex.EncodeToString(raw)
	w.other = upstreamtest.Start(t, func(rw http.ResponseWriter, r *http.Request) {
		rw.Write(echoBody(seenOf("other origin", r)))
	})
	w.up = newLeakUpstream(t, w.other.URL)
	w.closed = freePort(t)
	// The agent's model echoes the credential it got: in a tool call's arguments,
	// then in its answer; the other model in a 401.
	w.model = agenttest.NewServerFunc(t, func(r agenttest.Request) agenttest.Reply {
		auth := r.Header.Get("Authorization")
		if len(r.ToolNames()) > 0 && len(r.ToolResults()) == 0 {
			args, _ := json.Marshal(map[string]string{"args": auth})
			return agenttest.Reply{ToolCalls: []agenttest.ToolCall{{Name: "LEAK_TOOL", Arguments: string(args)}}}
		}
		return agenttest.Answer(fmt.Sprintf("the model was sent %s; the tool said %q", auth, r.ToolResults()))
	})
	w.denyModel = agenttest.NewServerFunc(t, func(r agenttest.Request) agenttest.Reply {
		return agenttest.Reply{Status: http.StatusUnauthorized, Body: `{"error":"bad credential ` + r.Header.Get("Authorization") + `"}`}
	})
	env := w.sec.env()
	var busSeed string
	w.n = nodetest.Start(t, func(c *capdir.Config) {
		c.SecretEnv = []string{"LEAK_*"} // as --secret-env 'LEAK_*'
		c.Breaker = breaker.Config{Threshold: 3}
		c.HTTPRunner.Timeout = 5 * time.Second
		c.AgentProviders = []string{"deny-=" + w.denyModel.URL, "*=" + w.model.URL}
		c.Log.Listen = "127.0.0.1:0"
		// The scan reads the store's bytes: uncompressed, they hold every event as
		// appended (S2 re-encodes the same bytes, so what is absent here is absent there).
		c.Log.Compression = eventlog.CompressionNone
		busSeed = addBusIdentity(t, c.Log.DataDir, leakBusClient, eventlog.RoleClient)
	}, capdir.WithLogger(slog.New(slog.NewTextHandler(w.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))), capdir.WithEnv(func(name string) (string, bool) { v, ok := env[name]; return v, ok }))
	w.bus = (&guardedNode{n: w.n, seeds: map[string]string{leakBusClient: busSeed}}).connect(t, leakBusClient)
	w.cl = &leakClient{t: t, n: w.n}
	return w
}

// addRows writes every auth form against every kind of upstream answer; two agent
// rows, the agent's tool on the other origin, and a flow.
func (w *leakWorld) addRows() {
	t := w.t
	add := func(row map[string]any) {
		t.Helper()
		if row["content"] == nil {
			row["content"] = "# WHAT: " + row["key"].(string) + ", a row of the leak test\n# ARGS: $1=text"
		}
		b, _ := json.Marshal(row)
		if code, out := w.cl.do("POST", "/api/directory", string(b), w.owner...); code != http.StatusCreated {
			t.Fatalf("POST row %s: %d %s", b, code, out)
		}
		w.keys = append(w.keys, row["key"].(string))
	}
	for _, a := range leakAuths {
		for _, kind := range leakTargets {
			key, path := a.name+"_"+kind, "/"+strings.ToLower(kind)+"/"+strings.ToLower(a.name)
			row := map[string]any{"key": key, "type": "http", "auth": a.auth, "category": "leak", "target": "GET " + w.up.URL + path + "?q=$1"}
			switch kind {
			case "ECHO":
				row["target"] = "POST " + w.up.URL + path + "?q=$1"
				row["content"] = "# WHAT: echo\n# ARGS: $1=text\n{\"arg\":\"$1\"}"
			case "CLOSED":
				row["target"] = "GET http://" + w.closed + path + "?q=$1"
			}
			add(row)
		}
	}
	add(map[string]any{"key": "LEAK_TOOL", "type": "http", "category": "leaktools", "target": "GET " + w.other.URL + "/tool?q=$1",
		"content": "# WHAT: looks a text up\n# WHEN_TO_USE: always\n# ARGS: $1=text"})
	add(map[string]any{"key": "AGENT", "type": "agent", "target": "leak-model", "auth": "bearer:LEAK_AGENT_API_KEY",
		"category": "leak", "allowed_categories": "leaktools", "content": "# WHAT: an agent of the leak test\nAnswer."})
	add(map[string]any{"key": "AGENT_DENY", "type": "agent", "target": "deny-model", "auth": "bearer:LEAK_AGENT_API_KEY",
		"category": "leak", "content": "# WHAT: an agent whose model refuses its key\nAnswer."})
	add(map[string]any{"key": "FLOW", "type": "flow", "category": "leak",
		"content": "# WHAT: two echoes\n# ARGS: $1=text\nBEARER_ECHO: $1 > QUERY_ECHO: $PREV"})
}

// addRefusedRows: a row naming a variable outside the allow-list, or capdir's own,
// is refused at the door, and the refusal names the variable, not its value. Such
// rows reach the log anyway (written before the list changed, or by another
// writer): their calls must fail before the upstream.
func (w *leakWorld) addRefusedRows() {
	t := w.t
	w.refused = map[string]string{
		"REFUSED_DB":    "bearer:DB_PASSWORD",
		"REFUSED_OWNER": `headers:{"X-Owner":"$CAPDIR_TERMINAL_KEY"}`,
		"REFUSED_QUERY": "query:k=CAPDIR_TERMINAL_KEY",
	}
	for key, auth := range w.refused {
		row := contract.Row{Key: key, Type: contract.TypeHTTP, Target: "GET " + w.up.URL + "/echo/refused", Auth: auth,
			Category: "leak", Content: "# WHAT: names a variable it may not read", Enabled: 1, PlannerVisible: 1}
		b, _ := json.Marshal(row)
		if code, out := w.cl.do("POST", "/api/directory", string(b), w.owner...); code != http.StatusBadRequest ||
			!strings.Contains(out, "names the environment variable") {
			t.Fatalf("a row with auth %s: %d %s; want 400", auth, code, out)
		}
		forge(t, w.n, wire.DirectorySubject(key), wire.TypeDirectoryMutate,
			contract.DirectoryMutation{Action: contract.ActionCreate, Key: key, Row: &row})
		w.keys = append(w.keys, key)
	}
}

// callAsOwner: every row, run and shaped; the 401 rows until their breaker
// opens; the RUN NOW form.
func (w *leakWorld) callAsOwner() {
	for _, key := range w.keys {
		a := w.cl.dispatch(key, w.canary, false, w.owner...)
		w.results[key] = a
		w.ids = append(w.ids, a.id(), w.cl.dispatch(key, w.canary, true, w.owner...).id())
	}
	for _, a := range leakAuths {
		for range 3 {
			w.ids = append(w.ids, w.cl.dispatch(a.name+"_DENY", w.canary, false, w.owner...).id())
		}
		if r := w.cl.dispatch(a.name+"_DENY", w.canary, false, w.owner...); r.Proof.Status != wire.StatusRefusedBreakerOpen {
			w.t.Errorf("%s_DENY after 4 calls answered 401: %s %q; want its breaker open", a.name, r.Proof.Status, r.Result)
		}
	}
	for _, q := range []string{"&body=" + w.canary, "&body=" + w.canary + "&shape=1"} {
		w.cl.do("GET", "/api/dispatch?key=QUERY_ECHO"+q, "", w.owner...)
		w.cl.do("GET", "/api/dispatch?key=HEADERS_ECHO"+q, "", w.owner...)
	}
	// Every row again by eight callers at once: requests and receipts made
	// together share a pack, which is stored compressed (see stop).
	var wg sync.WaitGroup
	ids := make([][]string, 8)
	errs := make([]error, len(ids))
	for g := range ids {
		wg.Go(func() {
			for _, key := range w.keys {
				a, err := w.cl.tryDispatch(key, w.canary, g%2 == 1, w.owner...)
				if err != nil {
					errs[g] = err
					return
				}
				ids[g] = append(ids[g], a.id())
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		w.t.Fatal(err)
	}
	w.ids = append(w.ids, slices.Concat(ids...)...)
}

// callWithToken: a capability token holder (minted by POST /api/tokens) runs and
// shapes every row.
func (w *leakWorld) callWithToken() {
	code, out := w.cl.do("POST", "/api/tokens", `{"sub":"leak-agent","scope":{"categories":["leak","leaktools"]}}`, w.owner...)
	var minted struct{ Token string }
	if json.Unmarshal([]byte(out), &minted); code != http.StatusCreated || minted.Token == "" {
		w.t.Fatalf("mint: %d %s", code, out)
	}
	w.bearer, w.token = []string{"Authorization", "Bearer " + minted.Token}, minted.Token
	for _, key := range w.keys {
		w.ids = append(w.ids, w.cl.dispatch(key, w.canary, false, w.bearer...).id(), w.cl.dispatch(key, w.canary, true, w.bearer...).id())
	}
	w.cl.do("GET", "/api/dispatch?key=BASIC_ECHO&body="+w.canary, "", w.bearer...)
}

// leakBusClient is the bus client the leak test invokes as.
const leakBusClient = "leak-bus"

// callOverTheBus: a bus client's requests on its own subject, with the token
// holder's token; the receipt notices count as answers.
func (w *leakWorld) callOverTheBus() {
	for _, a := range leakAuths {
		for _, shape := range []bool{false, true} {
			rc := busInvoke(w.t, w.bus, leakBusClient, wire.InvocationRequest{Key: a.name + "_ECHO", Body: w.canary, Shape: shape, Token: w.token})
			if rc.Actor != "token:leak-agent" || rc.Status == wire.StatusRefusedToken || rc.Status == wire.StatusRefusedScope {
				w.t.Errorf("%s_ECHO over the bus: %s %q, actor %q; want the token holder's call", a.name, rc.Status, rc.Result, rc.Actor)
			}
			b, _ := json.Marshal(rc)
			w.cl.said = append(w.cl.said, said{what: "the bus receipt notice for " + a.name + "_ECHO", body: b})
			w.ids = append(w.ids, rc.InvocationID)
		}
	}
}

// checkOutcomes: the upstreams answered as meant (the echo came back, scrubbed),
// and the refused rows never ran.
func (w *leakWorld) checkOutcomes() {
	t := w.t
	for _, a := range leakAuths {
		if r := w.results[a.name+"_ECHO"]; !r.OK || !strings.Contains(r.Result, "REDACTED") || !strings.Contains(r.Result, w.canary) {
			t.Errorf("%s_ECHO: %+v; want the upstream's echo, its credential REDACTED", a.name, r)
		}
		if r := w.results[a.name+"_REDIRECT"]; !strings.HasPrefix(r.Result, "ERR:http:redirect_off_origin:"+w.other.URL+"/landing/") {
			t.Errorf("%s_REDIRECT: %q; want it refused at the other origin", a.name, r.Result)
		}
		if r := w.results[a.name+"_HUGE"]; r.Result != fmt.Sprintf("ERR:http:response_too_large:%d", httprunner.DefaultMaxResponseBytes) {
			t.Errorf("%s_HUGE: %q", a.name, r.Result)
		}
		if r := w.results[a.name+"_CLOSED"]; !strings.HasPrefix(r.Result, "ERR:http:fetch:") {
			t.Errorf("%s_CLOSED: %q", a.name, r.Result)
		}
	}
	for key, auth := range w.refused {
		name := strings.Trim(auth[strings.LastIndexAny(auth, ":=$")+1:], `"}`)
		if r := w.results[key]; r.Ran || !strings.HasSuffix(r.Result, "ERR:auth:env_not_allowed:"+name) {
			t.Errorf("%s (%s): %+v; want ERR:auth:env_not_allowed:%s", key, auth, r, name)
		}
	}
	if r := w.results["AGENT"]; !r.OK || !strings.Contains(r.Result, "the model was sent Bearer REDACTED") {
		t.Errorf("AGENT: %+v", r)
	}
}

// readEverything: every read the owner, a token holder or a stranger has.
func (w *leakWorld) readEverything() {
	for _, id := range w.ids {
		w.cl.do("GET", "/api/receipts/"+id, "", w.owner...)
		w.cl.do("GET", "/receipt/"+id, "")
		w.cl.do("GET", "/api/dispatch?confirm="+id, "")
	}
	for _, key := range w.keys {
		for _, path := range []string{"/api/receipts?key=" + key, "/api/directory/" + key, "/api/breaker/" + key,
			"/api/dispatch?key=" + key + "&format=markdown", "/api/dispatch?key=" + key + "&format=json"} {
			w.cl.do("GET", path, "", w.owner...)
		}
	}
	for _, path := range []string{"/api/dispatch?registry=1", "/api/dispatch?ask=echo+credential+agent", "/api/directory?limit=1000",
		"/api/breaker", "/metrics", "/healthz"} {
		if code, out := w.cl.do("GET", path, "", w.owner...); code != http.StatusOK {
			w.t.Errorf("GET %s: %d %.300s", path, code, out)
		}
	}
	w.cl.do("GET", "/api/dispatch?ask=echo", "", w.bearer...)
	w.cl.do("GET", "/healthz", "")
}

// stop checks that the log's store is JetStream's plain file store (no
// compression; no encryption is configured), reads every event of the log back
// (a pack's, stored compressed, as read), checks the replay, and stops the node.
func (w *leakWorld) stop() {
	t := w.t
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, s := range wire.Streams {
		st, err := w.n.Log().JetStream().Stream(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.Config.Compression != jetstream.NoCompression {
			t.Fatalf("stream %s is compressed (%v): the scan would not see its events", s, info.Config.Compression)
		}
	}
	for _, s := range wire.Streams {
		if err := w.n.Log().Read(ctx, s, 1, func(st eventlog.Stored) error {
			if st.Parts > 0 {
				w.packed++
			}
			w.events = append(append(append(append(w.events, st.Subject...), ' '), st.Data...), '\n')
			return nil
		}); err != nil {
			t.Fatalf("read %s: %v", s, err)
		}
	}
	nodetest.CheckReplay(t, w.n)
	if err := w.n.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// assertNothingLeaked searches every byte of the data dir (the log's store files,
// the projection, the rest), the node's log, every answer, and every request a
// server received (each may hold its own origin's credentials only).
func (w *leakWorld) assertNothingLeaked() {
	t := w.t
	all := w.sec.all()
	dir := w.n.Config().Log.DataDir
	leaks, files, size := nodetest.ScanDir(t, dir, all)
	t.Logf("scanned %d files, %d bytes, under the data dir; the log's events as read, %d bytes (%d of them out of packs); %d answers; %d bytes of log",
		files, size, len(w.events), w.packed, len(w.cl.said), len(w.logs.Bytes()))
	leaks = append(leaks, nodetest.FindSecrets("the log's events as read", w.events, all)...)
	if !strings.Contains(string(w.events), w.canary) || w.packed == 0 {
		t.Fatalf("the log's events as read hold the call bodies: %v, %d events out of packs; want both: the scan of them proves nothing",
			strings.Contains(string(w.events), w.canary), w.packed)
	}
	canaries, _, _ := nodetest.ScanDir(t, dir, []nodetest.Secret{{Name: "canary", Value: w.canary}})
	inStore, inProjection := false, false
	for _, c := range canaries {
		inStore = inStore || strings.HasPrefix(c.Where, "nats"+string(filepath.Separator)) && c.Form == "raw"
		inProjection = inProjection || c.Where == "projection.db" && c.Form == "raw"
	}
	if !inStore || !inProjection {
		t.Fatalf("the call bodies are not readable in the data dir (in the log's store: %v, in the projection: %v): the scan proves nothing; found %v",
			inStore, inProjection, canaries)
	}
	if len(w.logs.Bytes()) == 0 {
		t.Fatal("the node logged nothing")
	}
	leaks = append(leaks, nodetest.FindSecrets("the node's log", w.logs.Bytes(), all)...)
	for _, s := range w.cl.said {
		leaks = append(leaks, nodetest.FindSecrets("the answer to "+s.what, s.body, all)...)
	}
	allowed := map[string][]string{
		"upstream":   {"LEAK_BEARER_TOKEN", "LEAK_HEADER_API_KEY", "LEAK_OAUTH_TOKEN", "LEAK_ODD_TOKEN"},
		"model":      {"LEAK_AGENT_API_KEY"},
		"deny model": {"LEAK_AGENT_API_KEY"},
	}
	for i, r := range w.requests() {
		where := fmt.Sprintf("request %d to the %s (%s %.80s)", i, r.server, r.method, r.uri)
		leaks = append(leaks, nodetest.FindSecrets(where, r.dump(), except(all, allowed[r.server]...))...)
	}
	for i, l := range leaks {
		if i == 60 {
			t.Errorf("… and %d more leaks", len(leaks)-i)
			break
		}
		t.Errorf("leak: %s", l)
	}
}

// requests is every request the upstream, the other origin and the models received.
func (w *leakWorld) requests() []seen {
	reqs := append(append(recorded("upstream", w.up), recorded("other origin", w.other)...), modelRequests("model", w.model)...)
	return append(reqs, modelRequests("deny model", w.denyModel)...)
}

// assertEachOriginGotItsOwn: not vacuous, each origin got its credentials, in every
// form; the other origin got only the agent's tool call, its credential scrubbed;
// no row naming a refused variable reached its upstream.
func (w *leakWorld) assertEachOriginGotItsOwn() {
	t, sec, reqs := w.t, w.sec, w.requests()
	mustHaveSent(t, reqs, "upstream", "/echo/bearer", func(r seen) bool { return r.header.Get("Authorization") == "Bearer "+sec.bearer })
	mustHaveSent(t, reqs, "upstream", "/echo/basic", func(r seen) bool {
		u, p, ok := (&http.Request{Header: r.header}).BasicAuth()
		return ok && u == sec.odd && p == ""
	})
	mustHaveSent(t, reqs, "upstream", "/echo/headers", func(r seen) bool {
		return r.header.Get("X-Api-Key") == sec.header && r.header.Get("X-Odd") == "odd "+sec.odd
	})
	mustHaveSent(t, reqs, "upstream", "/echo/query", func(r seen) bool {
		u, err := url.ParseRequestURI(r.uri)
		return err == nil && u.Query().Get("key") == sec.odd
	})
	mustHaveSent(t, reqs, "upstream", "/echo/oauth", func(r seen) bool { return r.header.Get("Authorization") == "Bearer "+sec.oauth })
	mustHaveSent(t, reqs, "upstream", "/hop/", func(r seen) bool { return r.header.Get("Authorization") == "Bearer "+sec.bearer })
	mustHaveSent(t, reqs, "model", "/chat/completions", func(r seen) bool { return r.header.Get("Authorization") == "Bearer "+sec.agent })
	mustHaveSent(t, reqs, "deny model", "/chat/completions", func(r seen) bool { return r.header.Get("Authorization") == "Bearer "+sec.agent })
	mustHaveSent(t, reqs, "other origin", "/tool", func(r seen) bool { return strings.Contains(r.uri, "REDACTED") })
	for _, r := range reqs {
		if r.server == "other origin" && !strings.HasPrefix(r.uri, "/tool?") {
			t.Errorf("the other origin was sent %s %s", r.method, r.uri)
		}
		if strings.HasPrefix(r.uri, "/echo/refused") {
			t.Errorf("a row naming a refused variable reached its upstream: %s", r.dump())
		}
	}
}

// modelRequests are the requests a fake model server received, as seen.
func modelRequests(server string, s *agenttest.Server) []seen {
	var out []seen
	for _, r := range s.Requests() {
		uri := r.Path
		if r.RawQuery != "" {
			uri += "?" + r.RawQuery
		}
		out = append(out, seen{server: server, method: r.Method, uri: uri, header: r.Header, body: r.Body})
	}
	return out
}

// mustHaveSent checks that server received a request under path for which ok holds.
func mustHaveSent(t *testing.T, reqs []seen, server, path string, ok func(seen) bool) {
	t.Helper()
	for _, r := range reqs {
		if r.server == server && strings.HasPrefix(r.uri, path) && ok(r) {
			return
		}
	}
	t.Errorf("the %s never received the expected credential on %s", server, path)
}
