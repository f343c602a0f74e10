package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/command"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// A large upstream answer still gets its receipt, whole; a body over the payload
// ceiling is refused up front and appends nothing.
func TestLargeResultsAndBodies(t *testing.T) {
	big := strings.Repeat("x", 900<<10)
	up := upstreamtest.Start(t, upstreamtest.Reply(http.StatusOK, big))
	n := nodetest.Start(t, nil)
	postRow(t, n, `{"key":"BIG","type":"http","target":"GET `+up.URL+`","content":"# WHAT: a large answer"}`)

	code, got := dispatch(t, n, `{"key":"BIG","body":"`+strings.Repeat("y", 300<<10)+`"}`)
	if code != 200 || got["ok"] != true || got["result"] != "HTTP 200:"+big {
		t.Fatalf("%d ok=%v result of %d bytes", code, got["ok"], len(got["result"].(string)))
	}
	inv := got["proof"].(map[string]any)["invocation_id"].(string)
	if code, _ := nodetest.Do(t, n, "GET", "/api/receipts/"+inv, ""); code != 200 {
		t.Fatalf("receipt: %d", code)
	}

	before, err := n.Log().LastSeq(context.Background(), wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"BIG","body":"`+strings.Repeat("z", 2<<20)+`"}`)
	if code != 413 || !strings.Contains(body, "payload_too_large: the body is 2097152 bytes; the ceiling is 1048576") {
		t.Fatalf("%d %.300s", code, body)
	}
	if after, _ := n.Log().LastSeq(context.Background(), wire.DataStream); after != before {
		t.Fatalf("a refused body appended %d events", after-before)
	}
}

// Every route that takes a body answers a body or row over its limit with 413
// payload_too_large, naming the limit, and appends nothing: the request body cap
// (4 MiB), the row as the log would store it (JSON escapes '<' as \u003c, six
// bytes), and the dispatch payload ceiling.
func TestPayloadTooLargeIs413(t *testing.T) {
	n := nodetest.Start(t, nil)
	postRow(t, n, `{"key":"BIG","type":"fn","target":"echo","content":"# WHAT: echoes"}`)
	big := strings.Repeat("x", 5<<20)
	escapes := strings.Repeat("<", 3<<19) // 1.5 MiB sent, 9 MiB stored
	cases := []struct {
		name, method, path, body string
		chunked                  bool
		want                     string
	}{
		{"POST row", "POST", "/api/directory", `{"key":"NEW","type":"fn","content":"` + big + `"}`, false,
			"payload_too_large: the row is 5242918 bytes; the limit is 4194304"},
		{"POST row, chunked", "POST", "/api/directory", `{"key":"NEW","type":"fn","content":"` + big + `"}`, true,
			"payload_too_large: the row is more than 4194304 bytes; the limit is 4194304"},
		{"POST row as stored", "POST", "/api/directory", `{"key":"NEW","type":"fn","content":"# WHAT: ` + escapes + `"}`, false,
			"payload_too_large: the row is 9437"},
		{"PUT row as stored", "PUT", "/api/directory/BIG", `{"type":"fn","content":"# WHAT: ` + escapes + `"}`, false,
			"payload_too_large: the row is 9437"},
		{"PATCH", "PATCH", "/api/directory/BIG", `{"content":"` + big + `"}`, false,
			"payload_too_large: the patch is 5242894 bytes; the limit is 4194304"},
		{"PATCH row as stored", "PATCH", "/api/directory/BIG", `{"content":"# WHAT: ` + escapes + `"}`, false,
			"payload_too_large: the row is 9437"},
		{"dispatch POST 5 MiB", "POST", "/api/dispatch", `{"key":"BIG","body":"` + big + `"}`, false,
			"payload_too_large: the request body is 5242903 bytes; the limit is 4194304"},
		{"dispatch POST 10 MiB, chunked", "POST", "/api/dispatch", `{"key":"BIG","body":"` + big + big + `"}`, true,
			"payload_too_large: the request body is more than 4194304 bytes; the limit is 4194304"},
		{"dispatch GET ?body=", "GET", "/api/dispatch?key=BIG&body=" + strings.Repeat("y", 1<<20+1), "", false,
			"payload_too_large: the body is 1048577 bytes; the ceiling is 1048576"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctl, data := nodetest.ControlSeq(t, n), dataSeq(t, n)
			var rd io.Reader = strings.NewReader(tc.body)
			if tc.chunked {
				rd = io.MultiReader(rd) // no length: sent chunked
			}
			req, err := http.NewRequest(tc.method, n.URL()+tc.path, rd)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("x-terminal-key", nodetest.Key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var e struct{ Error string }
			decode(t, string(b), &e)
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.HasPrefix(e.Error, tc.want) {
				t.Fatalf("HTTP %d %.300s; want 413 %s", resp.StatusCode, b, tc.want)
			}
			if !strings.Contains(e.Error, "the limit is 4194304") && !strings.Contains(e.Error, "the ceiling is 1048576") {
				t.Errorf("%q does not name the limit", e.Error)
			}
			if c, d := nodetest.ControlSeq(t, n), dataSeq(t, n); c != ctl || d != data {
				t.Fatalf("a refused body appended: control %d -> %d, data %d -> %d", ctl, c, data, d)
			}
		})
	}
}

// An import row over the limit, as sent or as the log would store it, fails alone
// with payload_too_large and the limit; the rows around it are written. In both
// forms, and the row's key is named even when only its start was kept.
func TestImportRowTooLargeFailsAlone(t *testing.T) {
	n := nodetest.Start(t, nil)
	rows := []string{
		`{"key":"HUGE","type":"fn","content":"` + strings.Repeat("x", 5<<20) + `"}`,
		`{"key":"ESCAPED","type":"fn","content":"# WHAT: ` + strings.Repeat("<", 3<<19) + `"}`,
		`{"key":"FINE_%s","type":"fn","target":"now"}`,
	}
	for _, form := range []string{"ndjson", "array"} {
		t.Run(form, func(t *testing.T) {
			body := strings.Join(rows, "\n")
			if form == "array" {
				body = "[" + strings.Join(rows, ",") + "]"
			}
			body = fmt.Sprintf(body, form)
			before := nodetest.ControlSeq(t, n)
			status, got := send(t, n, "POST", "/api/directory/import", "", body)
			var res command.ImportResult
			decode(t, got, &res)
			if status != http.StatusOK || res.OK != 1 || len(res.Failed) != 2 {
				t.Fatalf("HTTP %d %.500s", status, got)
			}
			if f := res.Failed[0]; f.Index != 0 || f.Key != "HUGE" || f.Error != "payload_too_large: the row is 5242919 bytes; the limit is 4194304" {
				t.Errorf("failure 0 = %+v", f)
			}
			if f := res.Failed[1]; f.Index != 1 || f.Key != "ESCAPED" || !strings.HasPrefix(f.Error, "payload_too_large: the row is 9437") ||
				!strings.HasSuffix(f.Error, "the limit is 4194304") {
				t.Errorf("failure 1 = %+v", f)
			}
			if got := nodetest.ControlSeq(t, n); got != before+1 {
				t.Fatalf("appended %d events, want 1", got-before)
			}
		})
	}
}

// dataSeq is the data stream's last sequence.
func dataSeq(t testing.TB, n *capdir.Node) uint64 {
	t.Helper()
	seq, err := n.Log().LastSeq(context.Background(), wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}
