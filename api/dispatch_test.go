package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/fnrunner"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
)

func obj(t *testing.T, body string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("response is not JSON: %v\n%s", err, body)
	}
	return m
}

// newMeteo is a local stand-in for the sample Open-Meteo upstream: it records the
// query it was asked and answers like the real API.
func newMeteo(t *testing.T) *upstreamtest.Upstream {
	return upstreamtest.Start(t, upstreamtest.JSON(http.StatusOK, `{"latitude":37.763283,"longitude":-122.41286,"current":{"time":"2026-07-26T04:30","interval":900,"temperature_2m":15.7}}`))
}

// The sample five steps, against a local upstream.
func TestSampleWalkthrough(t *testing.T) {
	up := newMeteo(t)
	n := nodetest.Start(t, func(c *capdir.Config) { c.API.PublicURL = "https://capdir.example" })

	// Step 2: the POST, as documented (the upstream host swapped for a local one).
	row := `{
  "key": "ZZ_TEST_TEMPERATURE",
  "type": "http",
  "target": "GET ` + up.URL + `/v1/forecast?latitude=$1&longitude=$2&current=temperature_2m",
  "auth": "",
  "content": "# WHAT: Current temperature in Celsius for one latitude and longitude, from the Open-Meteo public API.\n# WHEN_TO_USE: a capability needs the live temperature at a coordinate.\n# ARGS: $1=latitude | $2=longitude\n# EX: [ZZ_TEST_TEMPERATURE]37.77|-122.42[/ZZ_TEST_TEMPERATURE]\n# OUTPUT: JSON with current.temperature_2m",
  "category": "tools",
  "enabled": 1,
  "planner_visible": 1,
  "examples": "[\"37.77|-122.42\"]"
}`
	if code, body := nodetest.DoKey(t, n, "POST", "/api/directory", row, ""); code != 401 || strings.TrimSpace(body) != `{"error":"unauthorized","how_to_fix":"send the owner key in the x-terminal-key header"}` {
		t.Fatalf("without the key: %d %s", code, body)
	}
	code, body := nodetest.Do(t, n, "POST", "/api/directory", row)
	if code != 201 {
		t.Fatalf("POST: %d %s", code, body)
	}

	// Step 3: invoke it. No restart, no cache warm-up.
	code, body = nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"ZZ_TEST_TEMPERATURE","body":"37.77|-122.42"}`)
	if code != 200 {
		t.Fatalf("dispatch: %d %s", code, body)
	}
	got := obj(t, body)
	if got["ok"] != true || got["ran"] != true {
		t.Fatalf("dispatch = %s", body)
	}
	if !strings.HasPrefix(got["result"].(string), `HTTP 200:{"latitude":37.763283`) || !strings.Contains(got["result"].(string), `"temperature_2m":15.7`) {
		t.Fatalf("result = %v", got["result"])
	}
	if !strings.HasPrefix(got["trace"].(string), "t_") {
		t.Fatalf("trace = %v", got["trace"])
	}
	proof := got["proof"].(map[string]any)
	inv := proof["invocation_id"].(string)
	if proof["ok"] != true || !strings.HasPrefix(inv, "inv_") || proof["public_receipt"] != "https://capdir.example/receipt/"+inv {
		t.Fatalf("proof = %v", proof)
	}
	if q := up.Queries(); len(q) != 1 || q[0] != "latitude=37.77&longitude=-122.42&current=temperature_2m" {
		t.Fatalf("upstream saw %v", q)
	}

	// Step 4: the receipt, public and keyless.
	code, body = nodetest.DoKey(t, n, "GET", "/api/dispatch?confirm="+inv, "", "")
	if c := obj(t, body); code != 200 || c["confirmed"] != true || c["status"] != "PROVEN_MATERIAL_RESULT" {
		t.Fatalf("confirm: %d %s", code, body)
	}
	code, body = nodetest.Do(t, n, "GET", "/api/receipts/"+inv, "")
	rc := obj(t, body)
	if code != 200 || rc["actor"] != "owner:terminal-key" || rc["runner"] != "http" || rc["material"] != true || rc["cost_usd"] != 0.0 {
		t.Fatalf("owner receipt: %d %s", code, body)
	}
	fp := rc["fingerprints"].(map[string]any)
	for _, k := range []string{"input", "output", "contract"} {
		if s, _ := fp[k].(string); len(s) != 64 {
			t.Fatalf("fingerprint %s = %v", k, fp[k])
		}
	}
	if fp["input"] != dispatcher.Fingerprint("37.77|-122.42") {
		t.Fatalf("input fingerprint = %v", fp["input"])
	}

	// Step 5: remove it; the receipt outlives the row.
	code, body = nodetest.Do(t, n, "DELETE", "/api/directory/ZZ_TEST_TEMPERATURE", "")
	if code != 200 || strings.TrimSpace(body) != `{"ok":true,"key":"ZZ_TEST_TEMPERATURE","deleted":1}` {
		t.Fatalf("DELETE: %d %s", code, body)
	}
	if code, body = nodetest.Do(t, n, "GET", "/api/directory/ZZ_TEST_TEMPERATURE", ""); code != 404 {
		t.Fatalf("GET after delete: %d %s", code, body)
	}
	code, body = nodetest.DoKey(t, n, "GET", "/api/dispatch?confirm="+inv, "", "")
	if c := obj(t, body); code != 200 || c["confirmed"] != true {
		t.Fatalf("confirm after delete: %d %s", code, body)
	}
	// The public view shows no arguments and no result.
	code, body = nodetest.DoKey(t, n, "GET", "/receipt/"+inv, "", "")
	if code != 200 || strings.Contains(body, "37.77") || strings.Contains(body, "temperature_2m") || strings.Contains(body, `"body"`) || strings.Contains(body, `"result"`) {
		t.Fatalf("public receipt leaks: %d %s", code, body)
	}
	if pub := obj(t, body); pub["status"] != "PROVEN_MATERIAL_RESULT" || pub["key"] != "ZZ_TEST_TEMPERATURE" {
		t.Fatalf("public receipt = %s", body)
	}
	// A RUN NOW URL (GET form) needs the owner key.
	if code, _ := nodetest.DoKey(t, n, "GET", "/api/dispatch?key=ZZ_TEST_TEMPERATURE&body=1|2", "", ""); code != 401 {
		t.Fatalf("keyless RUN NOW: %d", code)
	}
}

func postRow(t *testing.T, n *capdir.Node, row string) {
	t.Helper()
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", row); code != 201 {
		t.Fatalf("POST %s: %d %s", row, code, body)
	}
}

func dispatch(t *testing.T, n *capdir.Node, req string) (int, map[string]any) {
	t.Helper()
	code, body := nodetest.Do(t, n, "POST", "/api/dispatch", req)
	return code, obj(t, body)
}

// Every row of the sample failure table this surface covers.
func TestFailureTable(t *testing.T) {
	up := newMeteo(t)
	denied := upstreamtest.Start(t, upstreamtest.Reply(http.StatusUnauthorized, `{"error":"invalid api key"}`))
	closed := httptest.NewServer(http.NotFoundHandler())
	deadURL := closed.URL
	closed.Close()

	n := nodetest.Start(t, nil, capdir.WithEnv(runner.MapEnv(map[string]string{"GOOD_API_KEY": "present"})))
	doc := `# WHAT: test row\n# ARGS: see content`
	postRow(t, n, `{"key":"ZZ_TEST_TEMPERATURE","type":"http","target":"GET `+up.URL+`/v1/forecast?latitude=$1&longitude=$2&current=temperature_2m","content":"`+doc+`"}`)
	postRow(t, n, `{"key":"FN_MISSING","type":"fn","target":"no_such_function","content":"`+doc+`"}`)
	postRow(t, n, `{"key":"FN_BADJSON","type":"fn","target":"echo","content":"`+doc+`\n[\"$1\""}`)
	postRow(t, n, `{"key":"FN_NOTARRAY","type":"fn","target":"echo","content":"`+doc+`\n{\"a\":\"$1\"}"}`)
	postRow(t, n, `{"key":"NO_SECRET","type":"http","target":"GET `+up.URL+`/x","auth":"bearer:ABSENT_API_KEY","content":"`+doc+`"}`)
	postRow(t, n, `{"key":"BAD_PREFIX","type":"http","target":"GET `+up.URL+`/x","auth":"apikey:GOOD_API_KEY","content":"`+doc+`"}`)
	postRow(t, n, `{"key":"REFUSED","type":"http","target":"GET `+denied.URL+`/x","auth":"bearer:GOOD_API_KEY","content":"`+doc+`"}`)
	postRow(t, n, `{"key":"UNREACHABLE","type":"http","target":"GET `+deadURL+`/x","content":"`+doc+`"}`)

	t.Run("unknown key", func(t *testing.T) {
		code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"ZZ_TEST_TEMPERATUR","body":""}`)
		var got struct {
			InvocationID string `json:"invocation_id"`
			Trace        string `json:"trace"`
		}
		decode(t, body, &got)
		want := `{"attempted":"ZZ_TEST_TEMPERATUR","did_you_mean":["ZZ_TEST_TEMPERATURE"],"error":"unknown_key",` +
			`"invocation_id":"` + got.InvocationID + `","ran":false,"trace":"` + got.Trace + `"}`
		if code != 404 || strings.TrimSpace(body) != want || !strings.HasPrefix(got.InvocationID, "inv_") || !strings.HasPrefix(got.Trace, "t_") {
			t.Fatalf("%d %s", code, body)
		}
		// The refusal has a receipt, under the invocation id the 404 gave.
		code, rc := nodetest.Do(t, n, "GET", "/api/receipts/"+got.InvocationID, "")
		if code != 200 || !strings.Contains(rc, `"status":"REFUSED_UNKNOWN_KEY"`) || !strings.Contains(rc, `"trace":"`+got.Trace+`"`) {
			t.Fatalf("the refusal's receipt: %d %s", code, rc)
		}
	})
	results := []struct{ name, req, prefix string }{
		{"fn unknown target", `{"key":"FN_MISSING","body":"x"}`, "ERR:fn:unknown_target:no_such_function"},
		{"fn bad template", `{"key":"FN_BADJSON","body":"x"}`, "ERR:fn:bad_content_json:"},
		{"fn template not an array", `{"key":"FN_NOTARRAY","body":"x"}`, "ERR:fn:content_not_array"},
		{"malformed auth", `{"key":"BAD_PREFIX","body":""}`, "ERR:http:BAD_PREFIX:ERR:auth:unknown_prefix:apikey"},
		{"upstream refuses", `{"key":"REFUSED","body":""}`, `ERR:http:401:{"error":"invalid api key"}`},
		{"host unreachable", `{"key":"UNREACHABLE","body":""}`, "ERR:http:fetch:"},
	}
	for _, tc := range results {
		t.Run(tc.name, func(t *testing.T) {
			code, got := dispatch(t, n, tc.req)
			res, _ := got["result"].(string)
			if code != 200 || got["ok"] != false || !strings.HasPrefix(res, tc.prefix) {
				t.Fatalf("%d %v; want result starting %q", code, got, tc.prefix)
			}
		})
	}
	t.Run("missing credential shows no headers", func(t *testing.T) {
		code, got := dispatch(t, n, `{"key":"NO_SECRET","body":"","shape":true}`)
		shape, _ := got["shape"].(map[string]any)
		if code != 200 || shape == nil {
			t.Fatalf("%d %v", code, got)
		}
		if h, _ := json.Marshal(shape["headers"]); string(h) != "{}" {
			t.Fatalf(`headers = %s, want {}`, h)
		}
		if got["ran"] != false {
			t.Fatalf("shape mode ran: %v", got)
		}
	})
	t.Run("argument missing renders an empty slot", func(t *testing.T) {
		before := up.Hits()
		code, got := dispatch(t, n, `{"key":"ZZ_TEST_TEMPERATURE","body":"37.77"}`)
		if code != 200 || got["ok"] != true || up.Hits() != before+1 {
			t.Fatalf("%d %v", code, got)
		}
		queries := up.Queries()
		q := queries[len(queries)-1]
		if q != "latitude=37.77&longitude=&current=temperature_2m" {
			t.Fatalf("upstream query = %s", q)
		}
	})
	t.Run("bad key characters", func(t *testing.T) {
		code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"a.b c","body":""}`)
		if code != 400 || !strings.Contains(body, "key") {
			t.Fatalf("%d %s", code, body)
		}
	})
	t.Run("malformed body", func(t *testing.T) {
		code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":`)
		if code != 400 || !strings.Contains(body, `{\"key\":\"KEY\"`) {
			t.Fatalf("%d %s", code, body)
		}
	})
}

func TestDispatchAnswers202WhenTheReceiptIsSlow(t *testing.T) {
	release := make(chan struct{})
	fns := fnrunner.NewRegistry()
	fns.Register("slow", func(ctx context.Context, args []any) (string, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return "finally", nil
	})
	n := nodetest.Start(t, func(c *capdir.Config) { c.Fn.Registry = fns; c.API.DispatchWait = 100 * time.Millisecond })
	postRow(t, n, `{"key":"SLOW","type":"fn","target":"slow","content":"# WHAT: slow"}`)
	code, got := dispatch(t, n, `{"key":"SLOW","body":""}`)
	inv, _ := got["invocation_id"].(string)
	if code != 202 || got["pending"] != true || !strings.HasPrefix(inv, "inv_") {
		t.Fatalf("%d %v", code, got)
	}
	if code, _ := nodetest.Do(t, n, "GET", "/api/receipts/"+inv, ""); code != 202 {
		t.Fatalf("pending receipt: %d", code)
	}
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, body := nodetest.Do(t, n, "GET", "/api/receipts/"+inv, "")
		if code == 200 {
			if rc := obj(t, body); rc["result"] != "finally" {
				t.Fatalf("receipt = %s", body)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("receipt never arrived: %d %s", code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A dispatch answers once its receipt is in the log, before this node's projection
// folds it (here it lingers a whole second): every read route still sees the
// receipt, and its effect on the breaker, right after the dispatch.
func TestReadsAfterDispatchSeeItsReceipt(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(up.Close)
	n := nodetest.Start(t, func(c *capdir.Config) { c.Projector.Linger = time.Second })
	postRow(t, n, `{"key":"ECHO_NOW","type":"fn","target":"echo","content":"# WHAT: echo"}`)
	postRow(t, n, `{"key":"DENIED","type":"http","target":"GET `+up.URL+`","content":"# WHAT: always 401"}`)

	start := time.Now()
	code, got := dispatch(t, n, `{"key":"ECHO_NOW","body":"hi"}`)
	if code != 200 || got["result"] != "hi" {
		t.Fatalf("dispatch: %d %v", code, got)
	}
	if el := time.Since(start); el >= time.Second {
		t.Fatalf("dispatch took %v: it waited for the projection's linger", el)
	}
	inv := got["proof"].(map[string]any)["invocation_id"].(string)
	for _, path := range []string{"/api/receipts/" + inv, "/receipt/" + inv, "/api/dispatch?confirm=" + inv} {
		if code, body := nodetest.Do(t, n, "GET", path, ""); code != 200 {
			t.Fatalf("GET %s right after the dispatch: %d %s", path, code, body)
		}
	}
	if code, body := nodetest.Do(t, n, "GET", "/api/receipts?key=ECHO_NOW", ""); code != 200 || !strings.Contains(body, inv) {
		t.Fatalf("receipts by key right after the dispatch: %d %s", code, body)
	}

	if code, got := dispatch(t, n, `{"key":"DENIED","body":""}`); code != 200 || got["ok"] != false {
		t.Fatalf("401 dispatch: %d %v", code, got)
	}
	if code, body := nodetest.Do(t, n, "GET", "/api/breaker/DENIED", ""); code != 200 || obj(t, body)["strikes"] != float64(1) {
		t.Fatalf("breaker right after a 401: %d %s", code, body)
	}
}
