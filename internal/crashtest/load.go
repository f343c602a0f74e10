package crashtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The rows invocations call: EchoKey is an fn row (the built-in echo), SlowKey an
// http row whose upstream (the test's) answers the body back after a while, so
// that calls are in flight when the server is killed.
const (
	EchoKey = "ECHO"
	SlowKey = "SLOW"
)

// Gate holds the clients while the server is down: the harness closes it before a
// kill and opens it once the next server answers /healthz.
type Gate struct {
	mu   sync.Mutex
	open chan struct{} // closed while the gate is open
	up   bool
}

// NewGate returns a closed gate.
func NewGate() *Gate { return &Gate{open: make(chan struct{})} }

// Open lets the clients through.
func (g *Gate) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.up {
		g.up = true
		close(g.open)
	}
}

// Close holds the clients from their next request on.
func (g *Gate) Close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.up {
		g.up = false
		g.open = make(chan struct{})
	}
}

// Wait returns once the gate is open, or ctx's error.
func (g *Gate) Wait(ctx context.Context) error {
	g.mu.Lock()
	ch := g.open
	g.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Outcome is what a client knows of one request.
type Outcome int

const (
	// Acked: the server answered 2xx; the write or invocation must survive.
	Acked Outcome = iota
	// Refused: the server answered 4xx; it applied nothing.
	Refused
	// Unknown: no answer (the server was killed) or 5xx; it may have applied it.
	Unknown
)

// attempt is one write of a row's content.
type attempt struct {
	content string
	outcome Outcome
}

// Ledger records every write a client sent and every invocation acknowledged. Each
// key has one writer, which writes it in order, so a key's attempts are ordered.
type Ledger struct {
	mu        sync.Mutex
	rows      map[string][]attempt
	invoked   map[string]string // acknowledged invocation id -> body
	counts    map[string]int
	anomalies []string
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger {
	return &Ledger{rows: map[string][]attempt{}, invoked: map[string]string{}, counts: map[string]int{}}
}

func (l *Ledger) write(key, content, op string, o Outcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rows[key] = append(l.rows[key], attempt{content, o})
	l.counts[op+outcomeName[o]]++
}

func (l *Ledger) invocation(inv, body string, o Outcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if o == Acked {
		l.invoked[inv] = body
	}
	l.counts["dispatch"+outcomeName[o]]++
}

func (l *Ledger) anomaly(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.anomalies = append(l.anomalies, fmt.Sprintf(format, args...))
}

var outcomeName = map[Outcome]string{Acked: " acked", Refused: " refused", Unknown: " unknown"}

// Count is how many requests of op ("POST", "PUT", "dispatch") ended with o.
func (l *Ledger) Count(op string, o Outcome) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.counts[op+outcomeName[o]]
}

// Invoked returns the acknowledged invocations: id -> body.
func (l *Ledger) Invoked() map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]string, len(l.invoked))
	for k, v := range l.invoked {
		out[k] = v
	}
	return out
}

// Anomalies are answers a client did not expect (a 200 dispatch with another
// result, a 4xx on a write that should pass, an unreadable answer).
func (l *Ledger) Anomalies() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.anomalies...)
}

// CheckRows compares the rows served (key -> content) with the ledger: a key with
// an acknowledged write holds its last acknowledged content, or the content of a
// later write whose answer was lost; a key without one is absent or holds such a
// content; no other row exists. It returns one line per violation.
func (l *Ledger) CheckRows(served map[string]string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var bad []string
	for key, atts := range l.rows {
		allowed := map[string]bool{}
		last := -1
		for i, a := range atts {
			if a.outcome == Acked {
				last = i
			}
		}
		for i, a := range atts {
			if i == last || i > last && a.outcome == Unknown {
				allowed[a.content] = true
			}
		}
		got, ok := served[key]
		switch {
		case !ok && last >= 0:
			bad = append(bad, fmt.Sprintf("%s: acknowledged write lost: the row is gone (last acknowledged %q)", key, atts[last].content))
		case ok && !allowed[got]:
			want := "absent"
			if last >= 0 {
				want = fmt.Sprintf("%q", atts[last].content)
			}
			bad = append(bad, fmt.Sprintf("%s: serves %q; want %s or a later unanswered write", key, got, want))
		}
	}
	for key := range served {
		if _, ok := l.rows[key]; !ok {
			bad = append(bad, fmt.Sprintf("%s: a row no client wrote", key))
		}
	}
	return bad
}

// Client sends requests to url: row creations (POST, a new key each time),
// replacements (PUT of one of its own keys) and invocations of EchoKey or SlowKey
// (a unique body each time), chosen by rng. It waits at gate before each request and
// returns when ctx ends.
type Client struct {
	ID     int
	URL    string
	Key    string // the owner key
	HTTP   *http.Client
	Gate   *Gate
	Ledger *Ledger
	Rng    *rand.Rand

	keys    []string
	version map[string]int
	n       int
}

// Run sends requests until ctx ends.
func (c *Client) Run(ctx context.Context) {
	if c.version == nil {
		c.version = map[string]int{}
	}
	for {
		if c.Gate.Wait(ctx) != nil {
			return
		}
		c.n++
		switch op := c.Rng.IntN(10); {
		case op < 4:
			c.dispatch(ctx)
		case op < 7 || len(c.keys) == 0:
			c.post(ctx)
		default:
			c.put(ctx, c.keys[c.Rng.IntN(len(c.keys))])
		}
	}
}

// PutRow writes a row of the client's choosing (PUT) and records it.
func (c *Client) PutRow(ctx context.Context, key, content, typ, target string) Outcome {
	b, _ := json.Marshal(map[string]string{"key": key, "type": typ, "target": target, "content": content})
	status, body, err := c.do(ctx, "PUT", "/api/directory/"+key, string(b))
	o := c.outcome(status, err, body, "PUT "+key, http.StatusOK, http.StatusCreated)
	c.Ledger.write(key, content, "PUT", o)
	return o
}

func (c *Client) content(key string) string {
	c.version[key]++
	return fmt.Sprintf("# WHAT: crash test row %s, version %d\n[\"$1\"]", key, c.version[key])
}

func rowJSON(key, content string) string {
	b, _ := json.Marshal(map[string]string{"key": key, "type": "fn", "target": "echo", "content": content})
	return string(b)
}

func (c *Client) post(ctx context.Context) {
	key := fmt.Sprintf("C%d_%05d", c.ID, len(c.keys))
	c.keys = append(c.keys, key)
	content := c.content(key)
	status, body, err := c.do(ctx, "POST", "/api/directory", rowJSON(key, content))
	c.Ledger.write(key, content, "POST", c.outcome(status, err, body, "POST "+key, http.StatusCreated))
}

// Put writes key (PUT, the next version of its content) and records it.
func (c *Client) Put(ctx context.Context, key string) Outcome {
	if c.version == nil {
		c.version = map[string]int{}
	}
	return c.put(ctx, key)
}

func (c *Client) put(ctx context.Context, key string) Outcome {
	content := c.content(key)
	status, body, err := c.do(ctx, "PUT", "/api/directory/"+key, rowJSON(key, content))
	o := c.outcome(status, err, body, "PUT "+key, http.StatusOK, http.StatusCreated)
	c.Ledger.write(key, content, "PUT", o)
	return o
}

// outcome classifies an answer; a refusal of a write the client expected to pass
// is an anomaly.
func (c *Client) outcome(status int, err error, body, what string, ok ...int) Outcome {
	switch {
	case err != nil || status >= 500:
		return Unknown
	case status >= 400:
		c.Ledger.anomaly("%s: %d %s", what, status, clip(body))
		return Refused
	}
	for _, s := range ok {
		if status == s {
			return Acked
		}
	}
	c.Ledger.anomaly("%s: unexpected %d %s", what, status, clip(body))
	return Unknown
}

type dispatchAnswer struct {
	OK     bool   `json:"ok"`
	Result string `json:"result"`
	Proof  struct {
		InvocationID string `json:"invocation_id"`
	} `json:"proof"`
	InvocationID string `json:"invocation_id"` // 202
}

func (c *Client) dispatch(ctx context.Context) {
	body := fmt.Sprintf("client %d call %d %x", c.ID, c.n, c.Rng.Uint64())
	key, want := EchoKey, body
	if c.Rng.IntN(2) == 0 {
		key, want = SlowKey, "HTTP 200:"+body // the http runner's result
	}
	in, _ := json.Marshal(map[string]string{"key": key, "body": body})
	status, out, err := c.do(ctx, "POST", "/api/dispatch", string(in))
	if err != nil || status >= 500 {
		c.Ledger.invocation("", body, Unknown)
		return
	}
	var a dispatchAnswer
	if jerr := json.Unmarshal([]byte(out), &a); jerr != nil {
		c.Ledger.anomaly("dispatch %q: %d, unreadable answer %s", body, status, clip(out))
		c.Ledger.invocation("", body, Unknown)
		return
	}
	switch {
	case status == http.StatusOK && a.OK && a.Result == want && strings.HasPrefix(a.Proof.InvocationID, "inv_"):
		c.Ledger.invocation(a.Proof.InvocationID, body, Acked)
	case status == http.StatusAccepted:
		c.Ledger.invocation(a.InvocationID, body, Unknown)
	default:
		c.Ledger.anomaly("dispatch %q: %d %s", body, status, clip(out))
		c.Ledger.invocation(a.Proof.InvocationID, body, Refused)
	}
}

func (c *Client) do(ctx context.Context, method, path, body string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, bytes.NewReader([]byte(body)))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("x-terminal-key", c.Key)
	req.Header.Set("content-type", "application/json")
	resp, err := c.HTTP.Do(req)
	if err == nil {
		var b []byte
		b, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil {
			return resp.StatusCode, string(b), nil
		}
	}
	// No answer: the server is being killed. The harness closes the gate first;
	// a request sent just before that fails here, and is not resent.
	select {
	case <-time.After(pause):
	case <-ctx.Done():
	}
	return 0, "", err
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// Served reads every row a node serves at url (GET /api/directory, paged): key ->
// content.
func Served(ctx context.Context, hc *http.Client, url, key string) (map[string]string, error) {
	out := map[string]string{}
	for offset := 0; ; {
		req, err := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/api/directory?limit=1000&offset=%d", url, offset), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("x-terminal-key", key)
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		var page struct {
			Rows []struct {
				Key     string `json:"key"`
				Content string `json:"content"`
			} `json:"rows"`
			Total int `json:"total"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET /api/directory: %d %v", resp.StatusCode, err)
		}
		for _, r := range page.Rows {
			out[r.Key] = r.Content
		}
		offset += len(page.Rows)
		if len(page.Rows) == 0 || offset >= page.Total {
			return out, nil
		}
	}
}

// pause is how long a client waits after a request that got no answer, so that a
// client whose gate has not closed yet does not spin.
const pause = 20 * time.Millisecond
