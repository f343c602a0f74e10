package api_test

import (
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/nodetest"
)

// A runner that fails while building the request in shape mode is not reported as a
// shape: the answer carries the failure's literal and the receipt says
// FAILED_BEFORE_RUN.
func TestShapeModeFailureIsNotAShape(t *testing.T) {
	n := nodetest.Start(t, nil)
	code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"BAD_AUTH","type":"http","target":"GET http://127.0.0.1:1/x","auth":"apikey:DEMO_API_KEY","content":"# WHAT: a row with a malformed auth column"}`)
	if code != 201 {
		t.Fatalf("write: %d %s", code, body)
	}
	code, got := dispatch(t, n, `{"key":"BAD_AUTH","body":"","shape":true}`)
	proof, _ := got["proof"].(map[string]any)
	if code != 200 || got["ok"] != false || got["shape"] != nil || proof["status"] != "FAILED_BEFORE_RUN" ||
		!strings.HasPrefix(got["result"].(string), "ERR:http:BAD_AUTH:ERR:auth:unknown_prefix:apikey") {
		t.Fatalf("%d %v", code, got)
	}
}
