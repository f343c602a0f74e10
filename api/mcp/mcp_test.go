package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The owner's session end to end with the SDK's client over streamable HTTP: the
// tool list (offered rows only, planner order, descriptions and schemas), a call
// with its receipt, a new row announced and called on the same session, a removed
// row announced, and refusals by name.
func TestOwnerSession(t *testing.T) {
	n := nodetest.Start(t, nil)
	rank := func(row map[string]any, r int) map[string]any { row["planner_rank"] = r; return row }
	postRow(t, n, rank(greetRow("GREET"), 20))
	postRow(t, n, rank(greetRow("FIRST"), 10))
	postRow(t, n, rank(greetRow("A_LAST"), 30))
	postRow(t, n, map[string]any{
		"key": "SHOUT", "type": "fn", "target": "echo", "planner_rank": 20,
		"content":      "# WHAT: Echo a JSON object back.\n# ARGS: the object\n[\"$1\"]",
		"input_schema": `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`,
	})
	hidden := greetRow("HIDDEN")
	hidden["planner_visible"] = 0
	postRow(t, n, hidden)
	off := greetRow("OFF")
	off["enabled"] = 0
	postRow(t, n, off)

	changed := make(chan struct{}, 1)
	cs := connect(t, n, owner(), "", changed)
	if caps := cs.InitializeResult().Capabilities; caps.Tools == nil || !caps.Tools.ListChanged {
		t.Fatalf("capabilities = %+v, want tools.listChanged", caps)
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.CacheScope != "private" || res.TTLMs != 0 {
		t.Errorf("tools/list cache hints: ttlMs %d, cacheScope %q; want 0, private (the list is the credential's)", res.TTLMs, res.CacheScope)
	}
	var names []string
	tools := map[string]*sdk.Tool{}
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		tools[tl.Name] = tl
	}
	if want := []string{"FIRST", "GREET", "SHOUT", "A_LAST"}; !slices.Equal(names, want) {
		t.Fatalf("tools/list = %v, want %v (planner order; no hidden or disabled row)", names, want)
	}
	if d := tools["GREET"].Description; d != "Greet someone by name.\nWhen to use: a capability needs a greeting." {
		t.Errorf("GREET description = %q", d)
	}
	schema, _ := json.Marshal(tools["GREET"].InputSchema)
	if !strings.Contains(string(schema), `"args":{"description":"the arguments as one string, separated by | ($1=name)","type":"string"}`) {
		t.Errorf("GREET inputSchema = %s", schema)
	}
	schema, _ = json.Marshal(tools["SHOUT"].InputSchema)
	if string(schema) != `{"properties":{"name":{"type":"string"}},"required":["name"],"type":"object"}` {
		t.Errorf("SHOUT inputSchema = %s, want the row's input_schema", schema)
	}

	got := call(t, cs, "GREET", map[string]any{"args": "Ada"})
	if got.IsError || text(got) != "Hello, Ada!" {
		t.Fatalf("GREET: isError=%v %q", got.IsError, text(got))
	}
	rc := receipt(t, n, invocationID(t, got))
	if rc.Key != "GREET" || rc.Actor != wire.OwnerActor || rc.Status != wire.StatusProvenMaterialResult || rc.Body != "Ada" {
		t.Errorf("receipt = %+v", rc.ReceiptSummary)
	}
	if got := call(t, cs, "SHOUT", map[string]any{"name": "Ada"}); got.IsError || text(got) != "Ada" {
		t.Errorf("SHOUT: isError=%v %q, want the arguments object's name as $1", got.IsError, text(got))
	}

	// A row written over HTTP is announced to the connected session and callable on it.
	postRow(t, n, greetRow("NEWROW"))
	awaitListed(t, cs, changed, "POST NEWROW", func(tools []*sdk.Tool) bool { return slices.Contains(toolNames(tools), "NEWROW") })
	if got := call(t, cs, "NEWROW", map[string]any{"args": "Grace"}); got.IsError || text(got) != "Hello, Grace!" {
		t.Errorf("NEWROW: isError=%v %q", got.IsError, text(got))
	}
	// Disabling a row takes it off the list, announced.
	if code, body := nodetest.Do(t, n, "PATCH", "/api/directory/FIRST", `{"enabled":0}`); code != 200 {
		t.Fatalf("PATCH: %d %s", code, body)
	}
	awaitListed(t, cs, changed, "disabling FIRST", func(tools []*sdk.Tool) bool { return !slices.Contains(toolNames(tools), "FIRST") })

	// Refusals by name: the gate's literal, as a tool error, with a receipt.
	for _, c := range []struct{ key, literal, status string }{
		{"OFF", "ERR:disabled:OFF", wire.StatusRefusedDisabled},
		{"FIRST", "ERR:disabled:FIRST", wire.StatusRefusedDisabled},
	} {
		got := call(t, cs, c.key, map[string]any{"args": "x"})
		if !got.IsError || text(got) != c.literal {
			t.Errorf("%s: isError=%v %q, want the tool error %q", c.key, got.IsError, text(got), c.literal)
			continue
		}
		if rc := receipt(t, n, invocationID(t, got)); rc.Status != c.status {
			t.Errorf("%s: receipt status %s", c.key, rc.Status)
		}
	}
	// The owner may call a hidden row by name: planner_visible only keeps it off the list.
	if got := call(t, cs, "HIDDEN", map[string]any{"args": "Bo"}); got.IsError || text(got) != "Hello, Bo!" {
		t.Errorf("HIDDEN: isError=%v %q", got.IsError, text(got))
	}
	// Arguments that cannot be read are refused before anything is appended.
	before := lastSeq(t, n.Log())
	if got := call(t, cs, "GREET", map[string]any{"args": 42}); !got.IsError || text(got) != `ERR:mcp:bad_arguments:GREET:"args" must be a string` {
		t.Errorf("args 42: isError=%v %q", got.IsError, text(got))
	}
	// A name that cannot be a key is refused before anything is appended too.
	if got := call(t, cs, "capdir.data.req.>", nil); !got.IsError || !strings.Contains(text(got), `must be 1 to`) {
		t.Errorf("a subject as a name: isError=%v %q", got.IsError, text(got))
	}
	if after := lastSeq(t, n.Log()); after != before {
		t.Errorf("refused arguments and names appended %d events", after-before)
	}
}

// lastSeq is the data stream's last sequence.
func lastSeq(t *testing.T, n interface {
	LastSeq(context.Context, string) (uint64, error)
}) uint64 {
	t.Helper()
	seq, err := n.LastSeq(context.Background(), wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// A token scoped to one key lists that key only and calls it; a call to a key
// outside its scope, by name, is the gate's scope refusal as a tool error.
func TestTokenSession(t *testing.T) {
	n := nodetest.Start(t, nil)
	postRow(t, n, greetRow("GREET"))
	postRow(t, n, greetRow("PAY"))
	fx := greetRow("FX")
	fx["category"] = "money"
	postRow(t, n, fx)
	vault := greetRow("VAULT") // in the token's category, above its risk ceiling
	vault["category"], vault["sensitive"], vault["input_schema"] = "money", 1, `{"type":"object"}`
	postRow(t, n, vault)
	tok, _ := mint(t, n, token.Scope{Keys: []string{"GREET"}, Categories: []string{"money"}}, time.Now(), time.Hour)

	changed := make(chan struct{}, 1)
	cs := connect(t, n, bearer(tok), "", changed)
	if names := listNames(t, cs); !slices.Equal(names, []string{"FX", "GREET"}) {
		t.Fatalf("tools/list = %v, want [FX GREET] (its key and its category, within its risk ceiling)", names)
	}
	if got := call(t, cs, "VAULT", map[string]any{}); !got.IsError || text(got) != "risk_ceiling:low<row:high" {
		t.Errorf("VAULT: isError=%v %q", got.IsError, text(got))
	}
	got := call(t, cs, "GREET", map[string]any{"args": "Ada"})
	if got.IsError || text(got) != "Hello, Ada!" {
		t.Fatalf("GREET: isError=%v %q", got.IsError, text(got))
	}
	if rc := receipt(t, n, invocationID(t, got)); rc.Actor != "token:mcp-agent" || rc.Status != wire.StatusProvenMaterialResult {
		t.Errorf("receipt = %+v", rc.ReceiptSummary)
	}
	got = call(t, cs, "PAY", map[string]any{"args": "1"})
	if !got.IsError || text(got) != "scope:PAY" {
		t.Fatalf("PAY: isError=%v %q, want the tool error scope:PAY", got.IsError, text(got))
	}
	if rc := receipt(t, n, invocationID(t, got)); rc.Status != wire.StatusRefusedScope || rc.Ran {
		t.Errorf("PAY receipt = %+v", rc.ReceiptSummary)
	}
	// A change to a row in the scope is announced.
	if code, body := nodetest.Do(t, n, "PUT", "/api/directory/GREET", `{"key":"GREET","type":"fn","target":"echo","content":"# WHAT: Greet, again.\n[\"Hi, $1!\"]"}`); code != 200 {
		t.Fatalf("PUT: %d %s", code, body)
	}
	awaitListed(t, cs, changed, "PUT GREET", func(tools []*sdk.Tool) bool {
		return len(tools) == 2 && tools[1].Name == "GREET" && tools[1].Description == "Greet, again."
	})
	// A row moved out of the token's category leaves its list.
	if code, body := nodetest.Do(t, n, "PATCH", "/api/directory/FX", `{"category":"other"}`); code != 200 {
		t.Fatalf("PATCH: %d %s", code, body)
	}
	awaitListed(t, cs, changed, "FX leaving the token's category", func(tools []*sdk.Tool) bool { return slices.Equal(toolNames(tools), []string{"GREET"}) })
}

// A tools/call on a row with an object input_schema, in tools mode and through
// search mode's call, sends the arguments object as the request's arguments, as
// POST /api/dispatch does an object body: the upstream gets each property in its
// place, and a value outside the enum is refused by the gate before it runs.
func TestToolsCallOnASchemaRowSendsTheArgumentsObject(t *testing.T) {
	up := upstreamtest.Start(t, upstreamtest.Reply(http.StatusOK, "found"))
	n := nodetest.Start(t, nil)
	postRow(t, n, map[string]any{"key": "FIND", "type": "http", "target": "GET " + up.URL + "/find?q=$1&mode=$2",
		"input_schema": `{"type":"object","properties":{"q":{"type":"string"},"mode":{"type":"string","enum":["fast","deep"]}},"required":["q","mode"]}`,
		"content":      "# WHAT: Find something.\n# ARGS: $1=q | $2=mode"})
	tools := connect(t, n, owner(), "", nil)
	if res := call(t, tools, "FIND", map[string]any{"q": "hello", "mode": "fast"}); res.IsError {
		t.Fatalf("tools mode: %q", text(res))
	}
	search := connect(t, n, owner(), "mode=search", nil)
	if res := call(t, search, "call", map[string]any{"key": "FIND", "args": map[string]any{"q": "hi there", "mode": "deep"}}); res.IsError {
		t.Fatalf("search mode's call: %q", text(res))
	}
	res := call(t, tools, "FIND", map[string]any{"q": "hello", "mode": "slow"})
	if !res.IsError || !strings.HasPrefix(text(res), "ERR:input:") || !strings.Contains(text(res), "mode") {
		t.Fatalf("a mode outside the enum: error=%v %q, want ERR:input naming mode", res.IsError, text(res))
	}
	if got, want := up.Queries(), []string{"q=hello&mode=fast", "q=hi+there&mode=deep"}; !slices.Equal(got, want) {
		t.Fatalf("the upstream got %q, want %q", got, want)
	}
}

// A token holder's tools/call to a sensitive row is held for the owner's approval:
// the tool error says so and where the holder waits for the outcome with its own
// credential (GET /api/dispatch?receipt=), not an owner-only route; once the owner
// approves, that wait answers the result.
func TestHeldToolsCallSaysWhereTheHolderWaits(t *testing.T) {
	n := nodetest.Start(t, nil)
	vault := greetRow("VAULT")
	vault["sensitive"], vault["input_schema"] = 1, `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	postRow(t, n, vault)
	tok, _, err := n.Mint(token.MintRequest{Subject: "mcp-agent", Scope: token.Scope{Keys: []string{"VAULT"}}, Risk: token.RiskHigh, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, n, bearer(tok), "", nil)
	got := call(t, cs, "VAULT", map[string]any{"name": "Ada"})
	inv := invocationID(t, got)
	wait := "/api/dispatch?receipt=" + inv + "&wait=30s"
	if !got.IsError || !strings.Contains(text(got), "waits for the owner's approval") || !strings.Contains(text(got), wait) ||
		strings.Contains(text(got), "/api/receipts/") {
		t.Fatalf("held call: isError=%v %q; want the approval named and the wait at %s…", got.IsError, text(got), wait)
	}
	if code, body := nodetest.Do(t, n, "POST", "/api/approvals/"+inv, `{"decision":"approve"}`); code != 200 {
		t.Fatalf("approve: %d %s", code, body)
	}
	code, body := nodetest.DoToken(t, n, "GET", "/api/dispatch?receipt="+inv+"&wait=10s", "", tok)
	if code != 200 || !strings.Contains(body, "Hello, Ada!") {
		t.Fatalf("the holder's wait after the approval: %d %s", code, body)
	}
}
