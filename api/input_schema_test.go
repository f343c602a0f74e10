package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

// tempSchema is the temperature row's input_schema: two numbers, both required.
const tempSchema = `{"type":"object","properties":{"latitude":{"type":"number","minimum":-90,"maximum":90},` +
	`"longitude":{"type":"number","minimum":-180,"maximum":180}},"required":["latitude","longitude"],"additionalProperties":false}`

// temperatureRow is the sample row against up, with an input_schema when
// schema is set.
func temperatureRow(t *testing.T, key, upstream, schema string) string {
	t.Helper()
	row := map[string]any{
		"key": key, "type": "http", "target": "GET " + upstream + "?latitude=$1&longitude=$2", "auth": "",
		"content":  "# WHAT: Current temperature in Celsius for one latitude and longitude.\n# ARGS: $1=latitude | $2=longitude",
		"category": "tools", "enabled": 1, "input_schema": schema,
	}
	b, err := json.Marshal(row)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dispatchAnswer is a dispatch's answer as a caller reads it.
type dispatchAnswer struct {
	OK     bool    `json:"ok"`
	Ran    bool    `json:"ran"`
	Result *string `json:"result"`
	Proof  struct {
		InvocationID string `json:"invocation_id"`
		Status       string `json:"status"`
	} `json:"proof"`
	Error string `json:"error"`
}

func dispatchAs(t *testing.T, n *capdir.Node, body string) (int, dispatchAnswer) {
	t.Helper()
	code, out := nodetest.Do(t, n, "POST", "/api/dispatch", body)
	var a dispatchAnswer
	decode(t, out, &a)
	return code, a
}

// A row with input_schema has its arguments checked before anything runs: a bad
// call is refused with ERR:input and HTTP 400 and never reaches the upstream; an
// object body is validated as it is and runs as its pipe form; a row without
// input_schema is unaffected.
func TestInputSchemaAtTheDoor(t *testing.T) {
	up := newMeteo(t)
	n := nodetest.Start(t, nil)
	mustDo(t, n, 201, "POST", "/api/directory", temperatureRow(t, "ZZ_TEST_TEMPERATURE", up.URL, tempSchema))
	mustDo(t, n, 201, "POST", "/api/directory", temperatureRow(t, "ZZ_UNTYPED", up.URL, ""))

	// Refused: nothing runs, the upstream is never called.
	for _, tc := range []struct{ body, reason string }{
		{`{"key":"ZZ_TEST_TEMPERATURE","body":"abc|-122.42"}`, `ERR:input:latitude: must be number, got string "abc"`},
		{`{"key":"ZZ_TEST_TEMPERATURE","body":"37.77"}`, `ERR:input:longitude: is required`},
		{`{"key":"ZZ_TEST_TEMPERATURE","body":"37.77|-200"}`, `ERR:input:longitude: must be >= -180, got -200`},
		{`{"key":"ZZ_TEST_TEMPERATURE","body":"1e99999999|0"}`,
			`ERR:input:latitude: is a number too large to check: at most 400 characters, with an exponent within ±1000`},
		{`{"key":"ZZ_TEST_TEMPERATURE","body":{"latitude":0,"longitude":-1e999999}}`,
			`ERR:input:longitude: is a number too large to check: at most 400 characters, with an exponent within ±1000`},
		{`{"key":"ZZ_TEST_TEMPERATURE","body":"37.77|-122.42|extra"}`,
			`ERR:input:takes at most 2 arguments (latitude | longitude), got 3; a "|" inside an argument splits it in two`},
		{`{"key":"ZZ_TEST_TEMPERATURE","body":{"latitude":"37.77","longitude":-122.42}}`, `ERR:input:latitude: must be number, got string "37.77"`},
		{`{"key":"ZZ_TEST_TEMPERATURE","body":{"latitude":37.77,"longitude":-122.42,"altitude":9}}`,
			`ERR:input:altitude: is not an argument of this row; it takes latitude | longitude`},
		{`{"key":"ZZ_TEST_TEMPERATURE","body":{"latitude":37.77},"shape":true}`, `ERR:input:longitude: is required`},
	} {
		code, a := dispatchAs(t, n, tc.body)
		if code != 400 || a.OK || a.Ran || a.Result == nil || *a.Result != tc.reason || a.Proof.Status != wire.StatusRefusedInput {
			t.Errorf("%s: HTTP %d %+v\nwant 400 %s %q", tc.body, code, a, wire.StatusRefusedInput, tc.reason)
		}
	}
	code, out := nodetest.Do(t, n, "GET", "/api/dispatch?key=ZZ_TEST_TEMPERATURE&body=abc|1", "")
	if code != 400 || !strings.Contains(out, `ERR:input:latitude: must be number, got string \"abc\"`) {
		t.Errorf("GET with a bad argument: HTTP %d %s", code, out)
	}
	if hits := up.Hits(); hits != 0 {
		t.Fatalf("the upstream was called %d times for refused calls", hits)
	}

	// Admitted, as a pipe body and as an object: the same upstream call.
	code, a := dispatchAs(t, n, `{"key":"ZZ_TEST_TEMPERATURE","body":"37.77|-122.42"}`)
	if code != 200 || !a.OK || !a.Ran || a.Proof.Status != wire.StatusProvenMaterialResult {
		t.Fatalf("pipe body: HTTP %d %+v", code, a)
	}
	code, a = dispatchAs(t, n, `{"key":"ZZ_TEST_TEMPERATURE","body":{"longitude":-122.42,"latitude":37.77}}`)
	if code != 200 || !a.OK || !a.Ran || a.Proof.Status != wire.StatusProvenMaterialResult {
		t.Fatalf("object body: HTTP %d %+v", code, a)
	}
	if hits, queries := up.Hits(), up.Queries(); hits != 2 || queries[0] != "latitude=37.77&longitude=-122.42" || queries[1] != queries[0] {
		t.Fatalf("upstream saw %d calls: %q", hits, queries)
	}
	// The object call's receipt records what ran: the pipe form.
	rc := obj(t, mustDo(t, n, 200, "GET", "/api/receipts/"+a.Proof.InvocationID, ""))
	if rc["body"] != "37.77|-122.42" || rc["fingerprints"].(map[string]any)["input"] != dispatcher.Fingerprint("37.77|-122.42") {
		t.Fatalf("object call's receipt: %v", rc)
	}

	// A row without input_schema: any pipe body runs as before; an object body is
	// the 400 it always was, and nothing is appended.
	code, a = dispatchAs(t, n, `{"key":"ZZ_UNTYPED","body":"abc|x|y"}`)
	if code != 200 || !a.Ran {
		t.Fatalf("untyped row: HTTP %d %+v", code, a)
	}
	before := dataSeq(t, n)
	for _, key := range []string{"ZZ_UNTYPED", "ZZ_NO_SUCH_ROW"} {
		code, a = dispatchAs(t, n, `{"key":"`+key+`","body":{"latitude":37.77}}`)
		if code != 400 || !strings.HasPrefix(a.Error, `"body" must be a string of pipe-separated arguments, like "Ada|42"`) {
			t.Errorf("object body for %s: HTTP %d %+v", key, code, a)
		}
	}
	if after := dataSeq(t, n); after != before {
		t.Fatalf("refused object bodies appended: data stream %d -> %d", before, after)
	}
	if hits := up.Hits(); hits != 3 {
		t.Fatalf("upstream calls %d, want 3", hits)
	}
}

// A request from outside the facade (a bus client's, here through the
// dispatcher) meets the same check: its arguments object is validated, and one
// that carries a pipe body as well is refused.
func TestInputSchemaForBusRequests(t *testing.T) {
	up := newMeteo(t)
	n := nodetest.Start(t, nil)
	mustDo(t, n, 201, "POST", "/api/directory", temperatureRow(t, "ZZ_TEST_TEMPERATURE", up.URL, tempSchema))
	mustDo(t, n, 201, "POST", "/api/directory", temperatureRow(t, "ZZ_UNTYPED", up.URL, ""))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		key, body, args string
		status, result  string
	}{
		{"ZZ_TEST_TEMPERATURE", "", `{"latitude":"north","longitude":1}`, wire.StatusRefusedInput, `ERR:input:latitude: must be number, got string "north"`},
		{"ZZ_TEST_TEMPERATURE", "1|2", `{"latitude":1,"longitude":2}`, wire.StatusRefusedInput,
			"ERR:input:send the arguments either as the body string or as one object of named arguments, not both"},
		{"ZZ_UNTYPED", "", `{"latitude":1}`, wire.StatusRefusedInput,
			`ERR:input:"body" must be a string of pipe-separated arguments, like "Ada|42" (this row has no input_schema, so its arguments have no names)`},
		{"ZZ_TEST_TEMPERATURE", "", `{"latitude":1,"longitude":2}`, wire.StatusProvenMaterialResult, ""},
	} {
		rc, err := n.Invoke(ctx, wire.InvocationRequest{Key: tc.key, Body: tc.body, Args: json.RawMessage(tc.args), Credential: wire.OwnerActor})
		if err != nil {
			t.Fatal(err)
		}
		if rc.Status != tc.status || tc.result != "" && rc.Result != tc.result {
			t.Errorf("%s %q %s: %s %q, want %s %q", tc.key, tc.body, tc.args, rc.Status, rc.Result, tc.status, tc.result)
		}
	}
	if hits, queries := up.Hits(), up.Queries(); hits != 1 || queries[0] != "latitude=1&longitude=2" {
		t.Fatalf("upstream saw %d calls: %q", hits, queries)
	}
}
