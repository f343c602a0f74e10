package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/internal/nodetest"
)

// A large upstream answer still gets its receipt, whole; a body over the payload
// ceiling is refused up front and appends nothing.
func TestLargeResultsAndBodies(t *testing.T) {
	big := strings.Repeat("x", 900<<10)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(big)) }))
	defer up.Close()
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

	before, err := n.Log.LastSeq(context.Background(), eventlog.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"BIG","body":"`+strings.Repeat("z", 2<<20)+`"}`)
	if code != 413 || !strings.Contains(body, "payload_too_large: the body is 2097152 bytes; the ceiling is 1048576") {
		t.Fatalf("%d %.300s", code, body)
	}
	if after, _ := n.Log.LastSeq(context.Background(), eventlog.DataStream); after != before {
		t.Fatalf("a refused body appended %d events", after-before)
	}
}
