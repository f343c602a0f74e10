package console_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/nodetest"
)

// Text from others (a caller's arguments, a row's content, a result) reaches
// the owner's pages with the characters that would reorder or hide what they
// show written as escapes: an approval's amount "1\u202e0000" shows as those
// characters, not as an amount that reads otherwise.
func TestConsoleShowsReorderingCharactersAsEscapes(t *testing.T) {
	n := startNode(t)
	const rlo, lri = "\u202e", "\u2066"
	if code, body := nodetest.Do(t, n, "POST", "/api/directory",
		`{"key":"PAY","type":"fn","target":"echo","sensitive":1,"category":"pay`+lri+`ments","input_schema":"{\"type\":\"string\"}","content":"# WHAT: Pay an amount`+rlo+`.\n# ARGS: $1=amount\n[\"paid $1\"]"}`); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	code, out := nodetest.Do(t, n, "POST", "/api/tokens", `{"sub":"billing-agent","scope":{"keys":["PAY"]},"risk":"high"}`)
	var tok struct{ Token string }
	if code != 201 || json.Unmarshal([]byte(out), &tok) != nil {
		t.Fatalf("mint: %d %s", code, out)
	}
	held := holdCall(t, n, tok.Token, "1"+rlo+"0000")
	code, out = nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"PAY","body":"2`+rlo+`0000"}`) // the owner's: no approval
	var rc struct {
		Proof struct {
			InvocationID string `json:"invocation_id"`
		} `json:"proof"`
	}
	if code != 200 || json.Unmarshal([]byte(out), &rc) != nil || rc.Proof.InvocationID == "" {
		t.Fatalf("owner's call: %d %s", code, out)
	}
	if err := nodetest.CatchUp(context.Background(), n); err != nil { // the pages show what the projection folded
		t.Fatal(err)
	}
	c := newClient(t, n.URL())
	c.signIn()
	for _, p := range []struct{ path, want string }{
		{"/console/approvals", `1\u202e0000`},
		{"/console/receipts/" + rc.Proof.InvocationID, `paid 2\u202e0000`},
		{"/console/rows/PAY", `Pay an amount\u202e.`},
		{"/console/rows/PAY", `pay\u2066ments`},
		{"/console/", `pay\u2066ments`},
	} {
		resp, body := c.do("GET", p.path, nil, nil)
		if resp.StatusCode != 200 || !strings.Contains(body, p.want) {
			t.Errorf("GET %s: %d, want %q shown as written; page:\n%s", p.path, resp.StatusCode, p.want, body)
		}
		if strings.Contains(body, rlo) || strings.Contains(body, lri) {
			t.Errorf("GET %s: a reordering character reaches the page as itself", p.path)
		}
	}
	if !strings.Contains(held, "inv_") {
		t.Fatalf("held call id %q", held)
	}
}
