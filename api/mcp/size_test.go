package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/testdata"
	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// capture records the JSON-RPC messages the server sends in answer to one method,
// as they come over the wire (the data of each server-sent event, or the JSON body).
type capture struct {
	withHeader
	method string

	mu  sync.Mutex
	got [][]byte
}

func (c *capture) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := c.withHeader.RoundTrip(r)
	if err != nil || !bytes.Contains(body, []byte(`"method":"`+c.method+`"`)) {
		return resp, err
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	c.mu.Lock()
	defer c.mu.Unlock()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		c.got = append(c.got, raw)
		return resp, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			c.got = append(c.got, []byte(d))
		}
	}
	return resp, nil
}

func (c *capture) reset() {
	c.mu.Lock()
	c.got = nil
	c.mu.Unlock()
}

// import900 writes 900 rows: the sample rows and the document stand-ins,
// repeated under numbered keys (the directory the registry's size is measured on,
// grown to 900), every one enabled and planner-visible.
func import900(t *testing.T, n *capdir.Node) {
	t.Helper()
	var sample, more []map[string]any
	if err := json.Unmarshal(testdata.SampleRows(), &sample); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "document_rows.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &more); err != nil {
		t.Fatal(err)
	}
	rows := append(sample, more...)
	var nd strings.Builder
	enc := json.NewEncoder(&nd)
	for i := range 900 {
		row := rows[i%len(rows)]
		row["key"] = fmt.Sprintf("%s_%03d", strings.Split(rows[i%len(rows)]["key"].(string), "_")[0], i)
		row["enabled"], row["planner_visible"] = 1, 1
		enc.Encode(row)
	}
	req, _ := http.NewRequest("POST", n.URL()+"/api/directory/import", strings.NewReader(nd.String()))
	req.Header.Set("x-terminal-key", nodetest.Key)
	req.Header.Set("Content-Type", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !bytes.HasPrefix(out, []byte(`{"ok":900,`)) {
		t.Fatalf("import: %d %.300s", resp.StatusCode, out)
	}
}

// The size of tools/list in both modes on a directory of 900 rows, in bytes as
// sent (the JSON-RPC response) and in tokens (o200k_base, the encoding of the
// GPT-4o and GPT-4.1 families, and cl100k_base, from the encodings
// tiktoken-go-loader ships: nothing is fetched). README's MCP section quotes the
// figures this test logs.
func TestToolsListSize900(t *testing.T) {
	n := nodetest.Start(t, nil)
	import900(t, n)
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	encs := map[string]*tiktoken.Tiktoken{}
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		enc, err := tiktoken.GetEncoding(name)
		if err != nil {
			t.Fatalf("encoding %s: %v", name, err)
		}
		encs[name] = enc
	}
	for _, c := range []struct {
		mode, query string
		tools       int
	}{{"tools", "", 900}, {"search", "mode=search", 3}} {
		rec := &capture{withHeader: owner(), method: "tools/list"}
		cs, err := sdkConnect(n, rec, c.query)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.ListTools(context.Background(), nil)
		cs.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) != c.tools || len(rec.got) != 1 {
			t.Fatalf("%s mode: %d tools in %d messages, want %d in one", c.mode, len(res.Tools), len(rec.got), c.tools)
		}
		msg := rec.got[0]
		o200 := len(encs["o200k_base"].Encode(string(msg), nil, nil))
		cl100 := len(encs["cl100k_base"].Encode(string(msg), nil, nil))
		t.Logf("%s mode: tools/list of %d tools: %d bytes (%d per tool), %d tokens o200k_base (%d per tool), %d tokens cl100k_base",
			c.mode, len(res.Tools), len(msg), len(msg)/c.tools, o200, o200/c.tools, cl100)
		if c.mode == "search" && len(msg) > 3000 {
			t.Errorf("search mode's tools/list is %d bytes: it should not grow with the directory", len(msg))
		}
	}
	// What search mode fetches instead: one search, one contract.
	rec := &capture{withHeader: owner(), method: "tools/call"}
	cs, err := sdkConnect(n, rec, "mode=search")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, c := range []struct {
		tool string
		args map[string]any
	}{{"search", map[string]any{"query": "list models"}}, {"describe", map[string]any{"key": "GROK_001"}}} {
		rec.reset()
		if res := call(t, cs, c.tool, c.args); res.IsError || len(rec.got) != 1 {
			t.Fatalf("%s: %q (%d messages)", c.tool, text(res), len(rec.got))
		}
		msg := string(rec.got[0])
		t.Logf("search mode: %s %v: %d bytes, %d tokens o200k_base", c.tool, c.args, len(msg), len(encs["o200k_base"].Encode(msg, nil, nil)))
	}
}
