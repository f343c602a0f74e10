package console_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/nodetest"
)

// The newest receipts come first in the order they were stored, whatever their
// invocation ids: ids derived from an Idempotency-Key (or chosen by a bus
// client) do not sort by time, and a token holder's calls under such ids must
// not stay above every later call of the list.
func TestNewestReceiptsAreInTheOrderTheyWereStored(t *testing.T) {
	n := startNode(t)
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"ECHO","type":"fn","target":"echo","content":"# WHAT: Echo."}`); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	code, out := nodetest.Do(t, n, "POST", "/api/tokens", `{"sub":"agent-7","scope":{"keys":["ECHO"]}}`)
	var tok struct{ Token string }
	if code != 201 || json.Unmarshal([]byte(out), &tok) != nil {
		t.Fatalf("mint: %d %s", code, out)
	}
	var keyed []string
	for _, k := range []string{"key-a", "key-b", "key-c", "key-d"} {
		code, out := nodetest.DoHeaders(t, n, "POST", "/api/dispatch", `{"key":"ECHO","body":"x"}`,
			map[string]string{"Authorization": "Bearer " + tok.Token, "Idempotency-Key": k})
		keyed = append(keyed, invocationOf(t, code, out))
	}
	code, out = nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"ECHO","body":"last"}`)
	last := invocationOf(t, code, out)
	c := newClient(t, n.URL())
	c.signIn()
	if err := nodetest.CatchUp(context.Background(), n); err != nil { // the page shows what the projection folded
		t.Fatal(err)
	}
	resp, body := c.do("GET", "/console/receipts", nil, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("receipts: %d", resp.StatusCode)
	}
	at := strings.Index(body, "/console/receipts/"+last)
	if at < 0 {
		t.Fatalf("the last call %s is not on the page", last)
	}
	for i, inv := range keyed {
		j := strings.Index(body, "/console/receipts/"+inv)
		if j < 0 || j < at {
			t.Errorf("the keyed call %d (%s) at %d, the last call at %d: want it listed after the last call", i, inv, j, at)
		}
		if i > 0 && j > strings.Index(body, "/console/receipts/"+keyed[i-1]) {
			t.Errorf("keyed calls %d and %d are not newest first", i-1, i)
		}
	}
}

// invocationOf is the invocation id of a dispatch's 200 answer.
func invocationOf(t *testing.T, code int, out string) string {
	t.Helper()
	var a struct {
		Proof struct {
			InvocationID string `json:"invocation_id"`
		} `json:"proof"`
	}
	if code != 200 || json.Unmarshal([]byte(out), &a) != nil || a.Proof.InvocationID == "" {
		t.Fatalf("dispatch: %d %s", code, out)
	}
	return a.Proof.InvocationID
}
