package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
)

// The entry points of TestSecretsNeverLeaveTheirOrigin beyond HTTP and the request
// subject: MCP (the official SDK's client, as the owner and as a token holder, in
// both session modes) and a bus client outside the node (its own NATS connection
// over TCP, with the identity capdir bus add-client records, calling wire.Invoke).

// mcpTap is an MCP client's transport: it sets one credential header on every
// request and keeps every byte of every response (status line, headers, body as
// the SDK reads it, event streams included).
type mcpTap struct {
	name, value string
	mu          sync.Mutex
	got         bytes.Buffer
}

func (m *mcpTap) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(m.name, m.value)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	var head bytes.Buffer
	head.WriteString(resp.Status + "\n")
	resp.Header.Write(&head)
	m.Write(head.Bytes())
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, m), resp.Body}
	return resp, nil
}

func (m *mcpTap) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.got.Write(p)
}

func (m *mcpTap) bytes() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return bytes.Clone(m.got.Bytes())
}

// mcpSession opens an MCP session at /mcp (query: "" for tools mode, "mode=search")
// through tap.
func (w *leakWorld) mcpSession(tap *mcpTap, query string) *sdk.ClientSession {
	w.t.Helper()
	if query != "" {
		query = "?" + query
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "capdir-leak-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint: w.n.URL() + "/mcp" + query, HTTPClient: &http.Client{Transport: tap}, MaxRetries: -1,
	}, nil)
	if err != nil {
		w.t.Fatalf("MCP connect (%s %s): %v", tap.name, query, err)
	}
	return cs
}

// mcpSaid keeps an MCP answer (a tool list, a tool result) as the client decoded it.
func (w *leakWorld) mcpSaid(what string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		w.t.Fatalf("%s: %v", what, err)
	}
	w.cl.said = append(w.cl.said, said{what: what, body: b})
}

// mcpCall calls one tool and keeps its answer and its receipt's invocation id.
func (w *leakWorld) mcpCall(cs *sdk.ClientSession, who, tool string, args any) *sdk.CallToolResult {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		w.t.Fatalf("MCP tools/call %s as %s: %v", tool, who, err)
	}
	w.mcpSaid("MCP tools/call "+tool+" as "+who, res)
	if id, _ := res.Meta["capdir/invocation_id"].(string); id != "" {
		w.ids = append(w.ids, id)
	}
	return res
}

// mcpText is every text content of a tool result.
func mcpText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text + "\n")
		}
	}
	return b.String()
}

// callOverMCP: the owner and a token holder, each in a tools-mode session (every
// row listed as a tool and called with the call body) and a search-mode session
// (search, describe every row, call every echo row); every list, every result and
// every byte of every response are answers.
func (w *leakWorld) callOverMCP() {
	t := w.t
	for _, cred := range []struct {
		who string
		tap *mcpTap
	}{
		{"the owner", &mcpTap{name: w.owner[0], value: w.owner[1]}},
		{"a token holder", &mcpTap{name: w.bearer[0], value: w.bearer[1]}},
	} {
		cs := w.mcpSession(cred.tap, "")
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatalf("MCP tools/list as %s: %v", cred.who, err)
		}
		w.mcpSaid("MCP tools/list as "+cred.who, list)
		if len(list.Tools) < len(leakAuths)*len(leakTargets) {
			t.Errorf("MCP tools/list as %s: %d tools; want every row of the test", cred.who, len(list.Tools))
		}
		for _, key := range w.keys {
			res := w.mcpCall(cs, cred.who, key, map[string]any{"args": w.canary})
			if strings.HasSuffix(key, "_ECHO") && (res.IsError || !strings.Contains(mcpText(res), "REDACTED") || !strings.Contains(mcpText(res), w.canary)) {
				t.Errorf("MCP %s as %s: %q; want the upstream's echo, its credential REDACTED", key, cred.who, mcpText(res))
			}
		}
		cs.Close()

		cs = w.mcpSession(cred.tap, "mode=search")
		w.mcpCall(cs, cred.who, "search", map[string]any{"query": "echo credential agent leak", "limit": 50})
		for _, key := range w.keys {
			w.mcpCall(cs, cred.who, "describe", map[string]any{"key": key})
		}
		for _, a := range leakAuths {
			w.mcpCall(cs, cred.who, "call", map[string]any{"key": a.name + "_ECHO", "args": w.canary})
		}
		cs.Close()
		w.cl.said = append(w.cl.said, said{what: "every MCP response to " + cred.who + ", as sent", body: cred.tap.bytes()})
	}
}

// watchNotices subscribes the bus client to every receipt notice of its own, and
// returns what ends the watch: it keeps every notice, as sent, as an answer.
func (w *leakWorld) watchNotices() (stop func()) {
	t := w.t
	notices := make(chan *nats.Msg, 4096)
	sub, err := w.bus.nc.ChanSubscribe(wire.ReceiptNotices(leakBusClient), notices)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.bus.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return func() {
		// The last notice is sent before the last call returns: a flush after it
		// delivers every one to the channel.
		w.bus.nc.Flush()
		sub.Unsubscribe()
		n := 0
		for {
			select {
			case m := <-notices:
				n++
				w.cl.said = append(w.cl.said, said{what: "the bus receipt notice on " + m.Subject + ", as sent", body: m.Data})
			default:
				if n == 0 {
					t.Error("the bus client received no receipt notice")
				}
				return
			}
		}
	}
}

// callWithTheBusClient: the bus client runs every row with wire.Invoke and the
// token holder's token; each receipt is an answer.
func (w *leakWorld) callWithTheBusClient() {
	t := w.t
	for _, key := range w.keys {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		rc, err := wire.Invoke(ctx, w.bus.nc, leakBusClient, key, w.canary, wire.WithToken(w.token))
		cancel()
		if err != nil {
			t.Fatalf("wire.Invoke %s: %v", key, err)
		}
		if rc.Actor != "token:leak-agent" {
			t.Errorf("wire.Invoke %s: %s %q, actor %q; want the token holder's call", key, rc.Status, rc.Result, rc.Actor)
		}
		if strings.HasSuffix(key, "_ECHO") && (!rc.OK || !strings.Contains(rc.Result, "REDACTED") || !strings.Contains(rc.Result, w.canary)) {
			t.Errorf("wire.Invoke %s: %s %q; want the upstream's echo, its credential REDACTED", key, rc.Status, rc.Result)
		}
		b, _ := json.Marshal(rc)
		w.cl.said = append(w.cl.said, said{what: "wire.Invoke's receipt for " + key, body: b})
		w.ids = append(w.ids, rc.InvocationID)
	}
}
