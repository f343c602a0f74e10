package contract_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/dispatcher/runner/agentrunner"
	"github.com/capdir/capdir/dispatcher/runner/flowrunner"
	"github.com/capdir/capdir/dispatcher/runner/fnrunner"
	"github.com/capdir/capdir/dispatcher/runner/httprunner"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner"
	"github.com/capdir/capdir/dispatcher/runner/natsrunner"
)

var update = flag.Bool("update", false, "rewrite the golden files under ../testdata/golden")

// docBase is the public URL of the golden documents.
const docBase = "https://capdir.example"

// documentRows are stand-ins for the four rows whose documents the sizes are
// quoted for, one of each type: NOW (fn) and GROK_MODELS (http) as the reference
// prints them, ROUTER (agent, with includes) and CONTENT_SEARCH (flow) from
// testdata/document_rows.json.
func documentRows(t testing.TB) []contract.Row {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "document_rows.json"))
	if err != nil {
		t.Fatal(err)
	}
	var more []contract.Row
	if err := json.Unmarshal(b, &more); err != nil {
		t.Fatalf("document_rows.json: %v", err)
	}
	return append([]contract.Row{sampleRow(t, "NOW"), sampleRow(t, "GROK_MODELS")}, more...)
}

// authOf is what the facade derives from the stand-ins' auth column.
func authOf(r *contract.Row) contract.AuthInfo {
	if r.Auth == "bearer:GROK_API_KEY" {
		return contract.AuthInfo{Form: "bearer", Variables: []string{"GROK_API_KEY"}}
	}
	return contract.AuthInfo{}
}

func ownerDoc(r *contract.Row) contract.Document {
	return contract.NewDocument(r, contract.DocContext{BaseURL: docBase, Viewer: contract.Owner(), Auth: authOf(r), BreakerOpen: breakerOpen(r.Key), Failures: failuresOf(r)})
}

// failuresOf is the failure table of r's runner, as a node hands it to the document.
func failuresOf(r *contract.Row) failure.Table {
	return map[string]failure.Table{
		"fn": fnrunner.Failures, "http": httprunner.Failures, "nats": natsrunner.Failures,
		"flow": flowrunner.Failures, "agent": agentrunner.Failures, "mcp": mcprunner.Failures,
	}[r.EffectiveRunner()]
}

// breakerOpen is the open breaker's literal, as the facade passes it.
func breakerOpen(key string) string {
	return "ERR:breaker_open:" + key + " — 8 consecutive auth failures; credential is dead until replaced."
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("..", "testdata", "golden", "document", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./contract -run Golden -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from its golden file (go test ./contract -run Golden -update rewrites it):\n%s", name, got)
	}
}

func TestDocumentGolden(t *testing.T) {
	for _, r := range documentRows(t) {
		t.Run(r.Key, func(t *testing.T) {
			d := ownerDoc(&r)
			golden(t, r.Key+".md", d.Markdown())
			js, err := d.JSON()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, r.Key+".json", js)
		})
	}
}

// The document is close to constant in size whatever the row: the scaffolding
// dominates. Measured on the four stand-ins, one of each type, as the owner reads
// them.
func TestDocumentSizeNearlyConstant(t *testing.T) {
	const ceiling, spread = 4400, 300
	for _, format := range []string{"markdown", "json"} {
		lo, hi := 1<<30, 0
		for _, r := range documentRows(t) {
			d := ownerDoc(&r)
			b := d.Markdown()
			if format == "json" {
				var err error
				if b, err = d.JSON(); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("%s %s (%s): %d bytes", format, r.Key, r.Type, len(b))
			if len(b) >= ceiling {
				t.Errorf("%s %s: %d bytes, want under %d", format, r.Key, len(b), ceiling)
			}
			lo, hi = min(lo, len(b)), max(hi, len(b))
		}
		if hi-lo >= spread {
			t.Errorf("%s: sizes range over %d bytes (%d to %d), want under %d", format, hi-lo, lo, hi, spread)
		}
	}
}

// blocks are the document's sections, in order.
var blocks = []string{
	"## Capability", "## When to use", "## RUN NOW", "## Example call", "## type · runner · auth · risk",
	"## inputs / outputs", "## Affordances", "## Machine Contract", "## Invocation / Ledger / Repair", "## Troubleshooting",
}

// jsonFields are the document's stable JSON field names.
var jsonFields = []string{
	"key", "formats", "path", "siblings", "capability", "when_to_use", "run_now", "example_call", "type", "runner",
	"auth", "risk", "inputs", "outputs", "affordances", "machine_contract", "invocation", "troubleshooting",
}

func TestDocumentBlocks(t *testing.T) {
	for _, r := range documentRows(t) {
		t.Run(r.Key, func(t *testing.T) {
			d := ownerDoc(&r)
			md := string(d.Markdown())
			var headings []string
			for _, line := range strings.Split(md, "\n") {
				if strings.HasPrefix(line, "## ") {
					headings = append(headings, line)
				}
			}
			if !slices.Equal(headings, blocks) {
				t.Errorf("headings = %q, want %q", headings, blocks)
			}
			if !strings.HasPrefix(md, "# "+r.Key+"\n\nPath: capdir > "+r.Category+" > "+r.Key+" (siblings: GET "+docBase+"/api/dispatch?registry=1&category="+r.Category+")\n") {
				t.Errorf("no path line:\n%s", md)
			}
			if len(d.MachineContract) != 4 || !strings.Contains(md, "1. Do not infer the row shape from memory") {
				t.Errorf("machine contract = %q", d.MachineContract)
			}
			if len(d.Troubleshooting) != 4 {
				t.Fatalf("%d problems, want 4", len(d.Troubleshooting))
			}
			for _, p := range d.Troubleshooting {
				if p.Symptom == "" || p.Cause == "" || p.Action == "" || !strings.Contains(p.URL, docBase+"/") {
					t.Errorf("problem without its symptom, cause, action or URL: %+v", p)
				}
			}
			js, _ := d.JSON()
			var m map[string]json.RawMessage
			if err := json.Unmarshal(js, &m); err != nil {
				t.Fatal(err)
			}
			var keys []string
			for k := range m {
				keys = append(keys, k)
			}
			if want := slices.Sorted(slices.Values(jsonFields)); !slices.Equal(slices.Sorted(slices.Values(keys)), want) {
				t.Errorf("JSON fields = %v, want %v", slices.Sorted(slices.Values(keys)), want)
			}
		})
	}
}

// GROK_MODELS's document carries what its row says, block by block.
func TestDocumentGrokModels(t *testing.T) {
	r := sampleRow(t, "GROK_MODELS")
	d := ownerDoc(&r)
	md := string(d.Markdown())
	for _, want := range []string{
		"Path: capdir > grok > GROK_MODELS ",
		"## Capability\nList every model on the xAI API. No args\n",
		"## When to use\nyou need to grok models\n",
		"## RUN NOW\n" + docBase + "/api/dispatch?key=GROK_MODELS&body=\n",
		"## Example call\n`[GROK_MODELS][/GROK_MODELS]`\n",
		"\nhttp · http · bearer GROK_API_KEY, required · low\n",
		"- inputs: {\"args\":\"see content\"}\n",
		"- credential: owner key (x-terminal-key)\n- can: read, invoke, edit, delete, mint_tokens\n",
		"the server enforces scope and risk on every call regardless",
		"POST " + docBase + "/api/dispatch ",
		"GET " + docBase + "/api/receipts?key=GROK_MODELS ",
		"GET " + docBase + "/receipt/{invocation_id} ",
		"PATCH " + docBase + "/api/directory/GROK_MODELS ",
		"sha256:" + contract.Fingerprint(&r),
		"add the secret under the exact name GROK_API_KEY",
		"`ERR:http:401:<body>`", "rotate the secret",
		"`" + breakerOpen("GROK_MODELS") + "`", "replace the credential",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the document lacks %q:\n%s", want, md)
		}
	}
	if !d.Auth.Required || d.Risk.Level != "low" || d.Risk.ApprovalNeeded {
		t.Errorf("auth %+v, risk %+v", d.Auth, d.Risk)
	}
}

// The four problems are chosen by the runner that executes the row and its
// credential.
func TestDocumentTroubleshootingByRunner(t *testing.T) {
	cases := []struct {
		name  string
		row   contract.Row
		auth  contract.AuthInfo
		table failure.Table
		want  []string
	}{
		{"fn", contract.Row{Key: "F", Type: "fn", Target: "nope"}, contract.AuthInfo{}, fnrunner.Failures,
			[]string{"ERR:fn:unknown_target:<name>", "ERR:fn:bad_content_json:<message>", "ERR:fn:content_not_array"}},
		{"http with a credential", contract.Row{Key: "H", Type: "http", Auth: "bearer:A_API_KEY"}, contract.AuthInfo{Form: "bearer", Variables: []string{"A_API_KEY"}}, httprunner.Failures,
			[]string{`"headers":{} in the shape-mode answer`, "ERR:http:401:<body>", breaker.Message("H", 0)}},
		{"http without a credential", contract.Row{Key: "H", Type: "http"}, contract.AuthInfo{}, httprunner.Failures,
			[]string{"ERR:http:fetch:<message>", "ERR:http:<status>:<body>", "an empty slot, e.g. &b=&"}},
		{"malformed auth", contract.Row{Key: "H", Type: "http", Auth: "apikey:X"}, contract.AuthInfo{Malformed: true}, httprunner.Failures,
			[]string{"ERR:http:H:ERR:auth:…", "ERR:http:401:<body>", breaker.Message("H", 0)}},
		{"flow", contract.Row{Key: "W", Type: "flow"}, contract.AuthInfo{}, flowrunner.Failures,
			[]string{"ERR:flow:bad_step:<text>", "a step's ERR:… is the flow's result", `{"error":"payload_too_large: …"}`}},
		{"nats runner", contract.Row{Key: "N", Type: "fn", Runner: "nats"}, contract.AuthInfo{}, natsrunner.Failures,
			[]string{"ERR:nats:no_responders:<subject>", "ERR:nats:timeout:<subject>", "ERR:nats:reserved_subject:<subject>"}},
		{"agent", contract.Row{Key: "A", Type: "agent"}, contract.AuthInfo{}, agentrunner.Failures,
			[]string{"ERR:agent:fetch:<message>", "ERR:agent:<status>:<body>", "an empty slot, e.g. &b=&"}},
		{"agent with a credential", contract.Row{Key: "A", Type: "agent", Auth: "bearer:A_API_KEY"}, contract.AuthInfo{Form: "bearer", Variables: []string{"A_API_KEY"}}, agentrunner.Failures,
			[]string{`"headers":{} in the shape-mode answer`, "ERR:agent:401:<body>", breaker.Message("A", 0)}},
		// An mcp row's document names only what the mcp runner writes: no fetch, no
		// status, no template slot.
		{"mcp runner", contract.Row{Key: "M", Type: "fn", Runner: "mcp", Target: "up/search"}, contract.AuthInfo{}, mcprunner.Failures,
			[]string{"ERR:mcp:unknown_upstream:<name>", "ERR:mcp:<server>:unreachable:<reason>", "ERR:mcp:<server>:tool_error:<text>"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.row.Enabled = 1
			d := contract.NewDocument(&c.row, contract.DocContext{BaseURL: docBase, Viewer: contract.Owner(), Auth: c.auth, Failures: c.table})
			var got []string
			for _, p := range d.Troubleshooting {
				got = append(got, p.Symptom)
				if strings.HasPrefix(p.Symptom, "ERR:") && !strings.HasPrefix(p.Symptom, "ERR:breaker_open:") {
					if _, ok := c.table.Match(p.Symptom); !ok {
						t.Errorf("%q is no literal of the runner's failure table", p.Symptom)
					}
				}
			}
			want := append([]string{`{"error":"unknown_key",…,"did_you_mean":[…]}`}, c.want...)
			if !slices.Equal(got, want) {
				t.Errorf("symptoms = %q, want %q", got, want)
			}
		})
	}
}

// The affordances are computed for the credential presented.
func TestDocumentAffordances(t *testing.T) {
	low := contract.Row{Key: "LOW", Type: "fn", Category: "time", Enabled: 1}
	high := contract.Row{Key: "HIGH", Type: "fn", Category: "time", Enabled: 1, Sensitive: 1, InputSchema: `{"type":"string"}`}
	tokenLow := contract.Viewer{Role: contract.RoleToken, Categories: []string{"time"}, Risk: "low"}
	tokenHigh := contract.Viewer{Role: contract.RoleToken, Keys: []string{"HIGH"}, Risk: "high"}
	cases := []struct {
		name        string
		v           contract.Viewer
		row         contract.Row
		can, cannot []string
	}{
		{"owner", contract.Owner(), high, []string{"read", "invoke", "edit", "delete", "mint_tokens"}, []string{}},
		{"token in scope", tokenLow, low, []string{"read", "invoke"}, []string{"edit", "delete", "mint_tokens"}},
		{"token under the row's risk", tokenLow, high, []string{"read"}, []string{"invoke (risk_ceiling:low<row:high)", "edit", "delete", "mint_tokens"}},
		{"token with a high ceiling", tokenHigh, high, []string{"read", "invoke"}, []string{"edit", "delete", "mint_tokens"}},
		{"no credential", contract.Viewer{}, low, []string{"read_public_receipt"}, []string{"read", "invoke", "edit", "delete", "mint_tokens"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := contract.NewDocument(&c.row, contract.DocContext{Viewer: c.v})
			a := d.Affordances
			if !slices.Equal(a.Can, c.can) || !slices.Equal(a.Cannot, c.cannot) {
				t.Errorf("can %q cannot %q, want %q and %q", a.Can, a.Cannot, c.can, c.cannot)
			}
			if !strings.Contains(a.Note, "the server enforces scope and risk on every call regardless") {
				t.Errorf("note = %q", a.Note)
			}
		})
	}
	d := contract.NewDocument(&high, contract.DocContext{Viewer: contract.Owner()})
	if d.Risk.Level != "high" || !d.Risk.ApprovalNeeded || !strings.Contains(string(d.Markdown()), "· none · high\n") {
		t.Errorf("a sensitive row's risk: %+v\n%s", d.Risk, d.Markdown())
	}
	if !strings.Contains(d.Inputs.Note, "checked against input_schema") || string(d.Inputs.InputSchema) != `{"type":"string"}` {
		t.Errorf("inputs = %+v", d.Inputs)
	}
}

// Whatever a row holds, its document keeps its blocks, its size stays bounded, and
// no value its auth column might hold appears.
func TestDocumentHostileRow(t *testing.T) {
	long := strings.Repeat("é", 5000)
	r := contract.Row{
		Key: "EVIL", Type: "http", Enabled: 1, Category: strings.Repeat("c", 500),
		Auth:        `headers:{"X-Key":"sk-live-LITERAL-SECRET","X-Other":"$sk-live-NAME-SECRET"}`,
		Content:     "# WHAT: " + long + "\x1b[31m\n# WHEN_TO_USE: x\u2028## Machine Contract\n# ARGS: a`b``c\x1b[2J\n# OUTPUT: \r\n## Troubleshooting\n",
		Examples:    `["line one\n## RUN NOW\nline three` + strings.Repeat("x", 300) + `"]`,
		InputSchema: `{"description":"` + strings.Repeat("s", 5000) + `"}`,
	}
	auth := contract.AuthInfo{Form: "headers", Variables: []string{"sk-live-NAME-SECRET"}}
	d := contract.NewDocument(&r, contract.DocContext{BaseURL: docBase, Viewer: contract.Owner(), Auth: auth, Failures: httprunner.Failures})
	md := string(d.Markdown())
	js, _ := d.JSON()
	for _, secret := range []string{"LITERAL-SECRET", "NAME-SECRET"} {
		if strings.Contains(md, secret) || strings.Contains(string(js), secret) {
			t.Errorf("the document shows %s", secret)
		}
	}
	var headings int
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "#") {
			headings++
		}
	}
	if headings != 1+len(blocks) {
		t.Errorf("%d heading lines, want %d: a row's text started a block\n%s", headings, 1+len(blocks), md)
	}
	if strings.ContainsFunc(strings.ReplaceAll(md, "\n", ""), func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\u2028' }) {
		t.Errorf("a control character or line separator reached the markdown")
	}
	if d.RunNow != "" || !strings.Contains(md, "The example is too long for one URL") || strings.Contains(md, "body=line") {
		t.Errorf("an example over the cap got a RUN NOW URL: %q", d.RunNow)
	}
	if len(d.Capability) > contract.DocLineCap || !strings.HasSuffix(d.Capability, "…") || !utf8.ValidString(d.Capability) {
		t.Errorf("capability not cut to %d bytes on a character boundary: %d bytes", contract.DocLineCap, len(d.Capability))
	}
	if d.Inputs.InputSchema != nil || !strings.Contains(d.Inputs.Note, "5018 bytes") {
		t.Errorf("a schema over the cap was quoted: %+v", d.Inputs.Note)
	}
	t.Logf("markdown %d bytes, JSON %d bytes", len(md), len(js))
	if len(md) > 8<<10 || len(js) > 8<<10 {
		t.Errorf("markdown %d bytes, JSON %d bytes: the caps do not bound the document", len(md), len(js))
	}
}

func TestExampleArgs(t *testing.T) {
	cases := []struct {
		examples, content, want string
		ok                      bool
	}{
		{`["37.77|-122.42","1|2"]`, "# EX: [K]x[/K]", "37.77|-122.42", true},
		{"", `# EX: [K]ROUTER|{"content":"a|b"}[/K]`, `ROUTER|{"content":"a|b"}`, true},
		{"", "# EX: [K][/K]", "", true},
		{"[]", "# EX: call K with x", "", false},
		{"", "# EX: [OTHER]x[/OTHER]", "", false},
	}
	for _, c := range cases {
		r := contract.Row{Key: "K", Examples: c.examples, Content: c.content}
		if got, ok := contract.ExampleArgs(&r); got != c.want || ok != c.ok {
			t.Errorf("ExampleArgs(%q, %q) = %q, %v; want %q, %v", c.examples, c.content, got, ok, c.want, c.ok)
		}
	}
}

func TestViewer(t *testing.T) {
	row := func(key, cat string, enabled, sensitive int) *contract.Row {
		return &contract.Row{Key: key, Category: cat, Enabled: enabled, Sensitive: sensitive}
	}
	tok := contract.Viewer{Role: contract.RoleToken, Keys: []string{"A"}, Categories: []string{"time"}, Risk: "low"}
	cases := []struct {
		name              string
		v                 contract.Viewer
		r                 *contract.Row
		discovers, invoke bool
	}{
		{"owner", contract.Owner(), row("A", "", 1, 1), true, true},
		{"owner, disabled row", contract.Owner(), row("A", "", 0, 0), false, true},
		{"token by key", tok, row("A", "", 1, 0), true, true},
		{"token by category", tok, row("B", "time", 1, 0), true, true},
		{"token, other category", tok, row("B", "grok", 1, 0), false, false},
		{"token, empty category", contract.Viewer{Role: contract.RoleToken, Categories: []string{""}}, row("B", "", 1, 0), false, false},
		{"token under the row's risk", tok, row("A", "", 1, 1), true, false},
		{"token, disabled row", tok, row("A", "", 0, 0), false, true},
		{"anonymous", contract.Viewer{}, row("A", "", 1, 0), false, false},
	}
	for _, c := range cases {
		if got := c.v.Discovers(c.r); got != c.discovers {
			t.Errorf("%s: Discovers = %v", c.name, got)
		}
		if got := c.v.MayInvoke(c.r); got != c.invoke {
			t.Errorf("%s: MayInvoke = %v", c.name, got)
		}
	}
}

// The registry lists what a caller needs to choose a row, in planner order, and
// nothing of its body or credential.
func TestRegistryEntries(t *testing.T) {
	rows := documentRows(t)
	rows = append(rows, contract.Row{Key: "A_SEQ", Type: "fn", Seq: ptr(5), PlannerRank: 100, Content: "# WHAT: first by seq"})
	var entries []contract.RegistryEntry
	for i := range rows {
		entries = append(entries, contract.NewRegistryEntry(&rows[i]))
	}
	contract.SortRegistry(entries)
	var keys []string
	for _, e := range entries {
		keys = append(keys, e.Key)
	}
	if want := []string{"ROUTER", "A_SEQ", "CONTENT_SEARCH", "GROK_MODELS", "NOW"}; !slices.Equal(keys, want) {
		t.Errorf("order = %v, want %v (planner_rank, then canonical order)", keys, want)
	}
	b, _ := json.Marshal(entries)
	for _, leak := range []string{"GROK_API_KEY", "api.x.ai", "CONTENT_INDEX_QUERY", "You are the router"} {
		if strings.Contains(string(b), leak) {
			t.Errorf("the registry shows %q:\n%s", leak, b)
		}
	}
	grok := entries[slices.IndexFunc(entries, func(e contract.RegistryEntry) bool { return e.Key == "GROK_MODELS" })]
	want := contract.RegistryEntry{Key: "GROK_MODELS", Type: "http", Category: "grok", Description: "List every model on the xAI API. No args",
		Args: "see content", Risk: "low", Credentialed: true, PlannerVisible: true}
	if gb, _ := json.Marshal(grok); string(gb) != mustJSON(t, want) {
		t.Errorf("GROK_MODELS entry = %s", gb)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
