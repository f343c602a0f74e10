package e2e_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher/runner/agentrunner/agenttest"
	"github.com/capdir/capdir/internal/nodetest"
)

// Shape mode shows a token holder no more than the contract document it may
// read: a flow's steps and branches to rows outside its scope are withheld (no
// key, no name, no body), an agent row's prompt is withheld. The owner's shape
// shows them.
func TestShapeShowsATokenHolderNoMoreThanItsDocument(t *testing.T) {
	model := agenttest.NewServer(t)
	n, _ := startComposeNode(t, func(c *capdir.Config) { c.AgentProviders = []string{"*=" + model.URL} })
	putRows(t, n,
		fnRowJSON("SAY", "echo", `["$1"]`),
		fnRowJSON("HIDDEN_AUDIT", "echo", `["$1"]`),
		rowJSON(map[string]any{"key": "TWOFLOW", "type": "flow", "content": "# WHAT: say, then audit\n# ARGS: $1=text\nSAY: $1 > HIDDEN_AUDIT: secret-$PREV > { SAY: $PREV | HIDDEN_AUDIT: $PREV }"}),
		rowJSON(map[string]any{"key": "HELPER", "type": "agent", "target": "gpt-test",
			"content": "# WHAT: answers questions\nThe vault code is zebra-42."}),
	)
	tok := mint(t, n, `{"sub":"partner","scope":{"keys":["TWOFLOW","SAY","HELPER"]},"ttl_seconds":600}`).Token
	shape := func(key, cred string) string {
		t.Helper()
		body := `{"key":"` + key + `","body":"hi","shape":true}`
		var code int
		var out string
		if cred == "" {
			code, out = nodetest.Do(t, n, "POST", "/api/dispatch", body)
		} else {
			code, out = nodetest.DoToken(t, n, "POST", "/api/dispatch", body, cred)
		}
		var a struct {
			Shape json.RawMessage `json:"shape"`
		}
		if code != 200 || json.Unmarshal([]byte(out), &a) != nil || len(a.Shape) == 0 {
			t.Fatalf("shape of %s: %d %s", key, code, out)
		}
		return string(a.Shape)
	}
	if got := shape("TWOFLOW", tok); strings.Contains(got, "HIDDEN_AUDIT") || strings.Contains(got, "secret-") ||
		strings.Count(got, `"withheld":true`) != 2 || !strings.Contains(got, `"key":"SAY"`) {
		t.Fatalf("the token holder's shape of TWOFLOW: %s; want SAY shown, both HIDDEN_AUDIT steps withheld", got)
	}
	if got := shape("TWOFLOW", ""); strings.Count(got, `"key":"HIDDEN_AUDIT"`) != 2 || strings.Contains(got, "withheld") {
		t.Fatalf("the owner's shape of TWOFLOW: %s", got)
	}
	if got := shape("HELPER", tok); strings.Contains(got, "zebra") || !strings.Contains(got, "withheld") {
		t.Fatalf("the token holder's shape of HELPER: %s; want the prompt withheld", got)
	}
	if got := shape("HELPER", ""); !strings.Contains(got, "zebra-42") {
		t.Fatalf("the owner's shape of HELPER: %s", got)
	}
	// What the token holder's contract documents show: no prompt, no steps.
	for _, key := range []string{"TWOFLOW", "HELPER"} {
		code, doc := nodetest.DoToken(t, n, "GET", "/api/dispatch?key="+key+"&format=json", "", tok)
		if code != 200 || strings.Contains(doc, "zebra") || strings.Contains(doc, "HIDDEN_AUDIT") {
			t.Fatalf("the token holder's document of %s: %d %s", key, code, doc)
		}
	}
}
