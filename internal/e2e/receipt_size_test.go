package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// addHTTPRow creates an http row calling target ("METHOD url"); content is the
// body template line, "" for none.
func addHTTPRow(t *testing.T, n *capdir.Node, key, target, content string) {
	t.Helper()
	row := map[string]any{
		"key": key, "type": "http", "target": target, "category": "tools",
		"content": "# WHAT: Call a local test upstream and return what it answers.\n" +
			"# ARGS: $1=anything\n# EX: [" + key + "]x[/" + key + "]\n# OUTPUT: text\n" + content,
	}
	b, _ := json.Marshal(row)
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", string(b)); code != 201 {
		t.Fatalf("POST row: %d %s", code, body)
	}
}

// bigBody is a dispatch body that stays under the 4 MiB request cap although
// every '<' is six bytes in JSON (\u003c), as it is in the request and receipt events.
var bigBody = strings.Repeat("<", 600<<10)

// upTo repeats pattern up to n bytes, whole patterns only.
func upTo(pattern string, n int) string { return strings.Repeat(pattern, n/len(pattern)) }

type dispatchAnswer struct {
	OK     bool   `json:"ok"`
	Ran    bool   `json:"ran"`
	Result string `json:"result"`
	Proof  struct {
		InvocationID string `json:"invocation_id"`
		Status       string `json:"status"`
	} `json:"proof"`
}

// dispatchBig POSTs a dispatch of key with body, checks it is answered 200 (its
// receipt written at once, not a 202 at the end of the dispatch wait), and returns
// the answer and the owner's receipt.
func dispatchBig(t *testing.T, n *capdir.Node, key, body string, shape bool) (dispatchAnswer, wire.Receipt) {
	t.Helper()
	req, _ := json.Marshal(map[string]any{"key": key, "body": body, "shape": shape})
	start := time.Now()
	code, out := nodetest.Do(t, n, "POST", "/api/dispatch", string(req))
	if code != 200 {
		t.Fatalf("dispatch answered %d after %v: %.300s", code, time.Since(start), out)
	}
	var a dispatchAnswer
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("dispatch answer: %v: %.300s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := nodetest.CatchUp(ctx, n); err != nil { // folding events of megabytes takes a while under -race
		t.Fatal(err)
	}
	code, out = nodetest.Do(t, n, "GET", "/api/receipts/"+a.Proof.InvocationID, "")
	var rc wire.Receipt
	if code != 200 || json.Unmarshal([]byte(out), &rc) != nil {
		t.Fatalf("receipt: %d %.300s", code, out)
	}
	return a, rc
}

// A result that fits the result cap in raw bytes but not once JSON-encoded (1 MiB
// of '<', of control characters, of a mix with multibyte and invalid UTF-8) is cut
// by its encoded size: one upstream call, one receipt, marked truncated, and the
// dispatch answered at once. Counted raw, such a receipt did not fit in one event:
// the call was run again on every redelivery and never got a receipt.
func TestOversizedResultIsCutByEncodedSize(t *testing.T) {
	for _, tc := range []struct{ name, out string }{
		{"html", upTo("<", 1<<20)},
		{"control", upTo("\x01", 1<<20)},
		{"mix", upTo("<<<<<<<<<\x01\x01\x01\x01\xffé\u2028", 1<<20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := upstreamtest.Start(t, upstreamtest.Reply(http.StatusOK, tc.out))
			n := nodetest.Start(t, func(c *capdir.Config) { c.Dispatch.AckWait = time.Second })
			const key = "BIG_ANSWER"
			addHTTPRow(t, n, key, "GET "+up.URL+"/big", "")

			a, rc := dispatchBig(t, n, key, bigBody, false)
			if !a.OK || !a.Ran || a.Proof.Status != wire.StatusProvenMaterialResult {
				t.Fatalf("answer: ok=%v ran=%v status=%s", a.OK, a.Ran, a.Proof.Status)
			}
			stored, _ := json.Marshal(rc.Result)
			if rc.Extra["truncated"] != true || !strings.HasSuffix(rc.Result, "…[truncated]") || len(stored)-2 > 1<<20 {
				t.Fatalf("receipt: truncated=%v, result of %d encoded bytes ending %q", rc.Extra["truncated"], len(stored)-2, rc.Result[max(0, len(rc.Result)-20):])
			}
			if rc.Fingerprints.Output != dispatcher.Fingerprint("HTTP 200:"+tc.out) || rc.Fingerprints.Input != dispatcher.Fingerprint(bigBody) {
				t.Fatal("the fingerprints must cover the whole input and output")
			}
			nodetest.WaitDispatchIdle(t, n.Log())
			if h := up.Hits(); h != 1 {
				t.Fatalf("the upstream was called %d times, want once", h)
			}
			if rcs := nodetest.Receipts(t, n.Log(), a.Proof.InvocationID); len(rcs) != 1 {
				t.Fatalf("%d receipts, want 1", len(rcs))
			}
		})
	}
}

// A receipt that cannot fit in one event however its body and result are cut
// (here the shape preview of a request that repeats a large argument) is replaced
// by a small failure receipt that says so, at once: no redelivery, no 202.
func TestUnfittableReceiptGetsAFailureReceipt(t *testing.T) {
	n := nodetest.Start(t, func(c *capdir.Config) { c.Dispatch.AckWait = time.Second })
	const key = "HUGE_SHAPE"
	// Each part stays under the substitution bound; the preview, JSON-encoded (every
	// '<' of the body six bytes), is over what one event holds.
	addHTTPRow(t, n, key, "POST http://127.0.0.1:1/x?a=$1", `{"a":"$$1","b":"$$1","c":"$$1"}`)
	a, rc := dispatchBig(t, n, key, bigBody, true)
	if a.OK || a.Ran || a.Proof.Status != wire.StatusFailedBeforeRun || !strings.HasPrefix(a.Result, "ERR:receipt:too_large:") {
		t.Fatalf("answer: ok=%v ran=%v status=%s result=%.100s", a.OK, a.Ran, a.Proof.Status, a.Result)
	}
	if rc.Result != a.Result || rc.Extra["truncated"] != true || rc.Fingerprints.Input != dispatcher.Fingerprint(bigBody) || len(rc.Body) > 1<<10 {
		t.Fatalf("failure receipt: %s truncated=%v body of %d bytes", rc.Result, rc.Extra["truncated"], len(rc.Body))
	}
	nodetest.WaitDispatchIdle(t, n.Log())
	if rcs := nodetest.Receipts(t, n.Log(), a.Proof.InvocationID); len(rcs) != 1 {
		t.Fatalf("%d receipts, want 1", len(rcs))
	}
}
