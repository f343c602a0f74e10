package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
	"github.com/capdir/capdir/testdata"
)

// docBase is the public URL of the discovery tests' nodes, the one the golden
// documents under testdata/golden/document are written for.
const docBase = "https://capdir.example"

// docSecret is GROK_API_KEY's value on the discovery tests' nodes: no document or
// registry may show it.
const docSecret = "xai-secret-value-7f3a9c"

// documentRows are the four rows the golden documents are for, as stored: NOW (fn)
// and GROK_MODELS (http) from the reference, ROUTER (agent, with includes) and
// CONTENT_SEARCH (flow) from testdata/document_rows.json.
func documentRows(t testing.TB) []json.RawMessage {
	t.Helper()
	var sample, more []json.RawMessage
	b, err := os.ReadFile(filepath.Join("..", "testdata", "document_rows.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(testdata.SampleRows(), &sample); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &more); err != nil {
		t.Fatal(err)
	}
	return append([]json.RawMessage{sample[0], sample[1]}, more...)
}

// discoveryNode starts a node serving docBase with GROK_API_KEY set, and writes
// the four document rows.
func discoveryNode(t *testing.T) *capdir.Node {
	t.Helper()
	n := nodetest.Start(t, func(c *capdir.Config) {
		c.API.PublicURL = docBase
	}, capdir.WithEnv(runner.MapEnv(map[string]string{"GROK_API_KEY": docSecret})))
	for _, raw := range documentRows(t) {
		mustDo(t, n, http.StatusCreated, "POST", "/api/directory", string(raw))
	}
	return n
}

// get sends a GET with the owner key ("" sends none) and returns the status, the
// content type and the body.
func get(t testing.TB, n *capdir.Node, path, key string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest("GET", n.URL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("x-terminal-key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// The owner reads a row's contract document as Markdown or JSON: byte for byte the
// golden document of its row, with no credential value in it.
func TestDocumentRoute(t *testing.T) {
	n := discoveryNode(t)
	for _, key := range []string{"NOW", "GROK_MODELS", "ROUTER", "CONTENT_SEARCH"} {
		for format, ext := range map[string]string{"markdown": ".md", "json": ".json"} {
			code, ctype, body := get(t, n, "/api/dispatch?key="+key+"&format="+format, nodetest.Key)
			wantType := map[string]string{"markdown": "text/markdown; charset=utf-8", "json": "application/json"}[format]
			if code != 200 || ctype != wantType {
				t.Fatalf("%s as %s: HTTP %d, %s: %s", key, format, code, ctype, body)
			}
			want, err := os.ReadFile(filepath.Join("..", "testdata", "golden", "document", key+ext))
			if err != nil {
				t.Fatal(err)
			}
			if body != string(want) {
				t.Errorf("%s as %s is not its golden document:\n%s", key, format, body)
			}
			if strings.Contains(body, docSecret) {
				t.Errorf("%s as %s shows GROK_API_KEY's value", key, format)
			}
			t.Logf("%s as %s: %d bytes", key, format, len(body))
		}
	}
}

// Documents and the registry need a credential (the owner key or a capability
// token: discovery_token_test.go); a disabled row is no row, in every projection.
func TestDocumentAccess(t *testing.T) {
	n := discoveryNode(t)
	paths := []string{"/api/dispatch?key=NOW&format=markdown", "/api/dispatch?key=NOW&format=json", "/api/dispatch?registry=1"}
	for _, p := range paths {
		for _, key := range []string{"", "wrong-key-0123456789abcdef"} {
			code, _, body := get(t, n, p, key)
			if code != 401 || strings.TrimSpace(body) != `{"error":"unauthorized","how_to_fix":"send the owner key in the x-terminal-key header, or a capability token as Authorization: Bearer <token>"}` {
				t.Errorf("%s with key %q: HTTP %d %s, want 401", p, key, code, body)
			}
		}
	}

	notFound := `{"error":"not_found","how_to_fix":"GET /api/dispatch?registry=1 lists the keys you may read (keys are case-sensitive)","key":"%s"}`
	for _, format := range []string{"markdown", "json"} {
		code, _, body := get(t, n, "/api/dispatch?key=NOPE&format="+format, nodetest.Key)
		if code != 404 || strings.TrimSpace(body) != fmt.Sprintf(notFound, "NOPE") {
			t.Errorf("unknown key as %s: HTTP %d %s", format, code, body)
		}
	}
	mustDo(t, n, 200, "PATCH", "/api/directory/NOW", `{"enabled":0}`)
	for _, format := range []string{"markdown", "json"} {
		code, _, body := get(t, n, "/api/dispatch?key=NOW&format="+format, nodetest.Key)
		if code != 404 || strings.TrimSpace(body) != fmt.Sprintf(notFound, "NOW") {
			t.Errorf("disabled row as %s: HTTP %d %s", format, code, body)
		}
	}
	if keys := registryKeys(t, n, ""); slices.Contains(keys, "NOW") {
		t.Errorf("the registry lists a disabled row: %v", keys)
	}
	mustDo(t, n, 200, "PATCH", "/api/directory/NOW", `{"enabled":1}`)
	if code, _, body := get(t, n, "/api/dispatch?key=NOW&format=json", nodetest.Key); code != 200 {
		t.Errorf("re-enabled row: HTTP %d %s", code, body)
	}
}

// A discovery query that cannot be answered says what to send instead, and reads
// no row.
func TestDocumentBadQueries(t *testing.T) {
	n := discoveryNode(t)
	cases := []struct{ query, want string }{
		{"key=NOW&format=xml", `format must be markdown or json, got "xml"`},
		{"key=NOW&format=", `format must be markdown or json, got ""`},
		{"format=markdown", "format= needs the row's key: GET /api/dispatch?key=KEY&format=markdown"},
		{"key=NOW&format=json&body=x", "format= and registry= read, body= and shape= invoke: send one or the other"},
		{"key=NOW&format=json&shape=true", "format= and registry= read, body= and shape= invoke"},
		{"key=NOW&key=GROK_MODELS&format=json", "key= appears 2 times; send it once"},
		{"key=N%20OW&format=json", "key: must be 1 to 128 characters from A-Z, a-z, 0-9, '_' and '-'"},
		{"key=NOW&format=json&category=time", "category= filters the registry: GET /api/dispatch?registry=1&category=CATEGORY"},
		{"registry=2", `registry must be 1, got "2"`},
		{"registry=1&key=NOW", "registry=1 lists rows and key= reads one: send one or the other"},
		{"registry=1&format=markdown", "the registry is JSON only"},
		{"registry=1&category=a&category=b", "category= appears 2 times; send it once"},
		{"format=" + strings.Repeat("x", 5000) + "&key=NOW", `format must be markdown or json, got "` + strings.Repeat("x", 40) + `…"`},
	}
	for _, c := range cases {
		code, _, body := get(t, n, "/api/dispatch?"+c.query, nodetest.Key)
		var got struct{ Error string }
		if err := json.Unmarshal([]byte(body), &got); err != nil || code != 400 || !strings.Contains(got.Error, c.want) {
			t.Errorf("?%.60s: HTTP %d %s, want 400 with %q", c.query, code, body, c.want)
		}
	}
}

// RUN NOW is one URL that fires the example call.
func TestDocumentRunNowFires(t *testing.T) {
	n := discoveryNode(t)
	mustDo(t, n, http.StatusCreated, "POST", "/api/directory", `{"key":"GREET","type":"fn","target":"echo","category":"demo",
		"content":"# WHAT: Greet someone by name.\n# ARGS: $1=name\n[\"Hello, $1 & co!\"]","examples":["Ada Lovelace|x"]}`)
	var doc contract.Document
	_, _, body := get(t, n, "/api/dispatch?key=GREET&format=json", nodetest.Key)
	decode(t, body, &doc)
	if doc.RunNow != docBase+"/api/dispatch?key=GREET&body=Ada+Lovelace%7Cx" || doc.ExampleCall != "[GREET]Ada Lovelace|x[/GREET]" {
		t.Fatalf("run_now %q, example_call %q", doc.RunNow, doc.ExampleCall)
	}
	code, _, body := get(t, n, strings.TrimPrefix(doc.RunNow, docBase), nodetest.Key)
	var got struct {
		OK     bool
		Result string
	}
	decode(t, body, &got)
	if code != 200 || !got.OK || got.Result != "Hello, Ada Lovelace & co!" {
		t.Fatalf("RUN NOW: HTTP %d %s", code, body)
	}
}

// The troubleshooting literals are the ones the runners and the breaker write.
func TestDocumentTroubleshootingLiterals(t *testing.T) {
	deny := upstreamtest.Start(t, upstreamtest.Reply(http.StatusUnauthorized, "bad key"))
	n := discoveryNode(t)
	mustDo(t, n, http.StatusCreated, "POST", "/api/directory", `{"key":"FN_GONE","type":"fn","target":"renamed_away","content":"# WHAT: x"}`)
	mustDo(t, n, http.StatusCreated, "POST", "/api/directory", `{"key":"DENIED","type":"http","target":"GET `+deny.URL+`","auth":"bearer:GROK_API_KEY","content":"# WHAT: x"}`)
	mustDo(t, n, http.StatusCreated, "POST", "/api/directory", `{"key":"NO_UPSTREAM","type":"fn","runner":"mcp","target":"gone/search","content":"# WHAT: x"}`)

	// prefix is a symptom up to its first variable part.
	prefix := func(s string) string { p, _, _ := strings.Cut(s, "<"); return p }
	for key, i := range map[string]int{"FN_GONE": 1, "DENIED": 2, "NO_UPSTREAM": 1} {
		var doc contract.Document
		_, _, body := get(t, n, "/api/dispatch?key="+key+"&format=json", nodetest.Key)
		decode(t, body, &doc)
		var res struct{ Result string }
		decode(t, mustDo(t, n, 200, "POST", "/api/dispatch", `{"key":"`+key+`","body":""}`), &res)
		if want := prefix(doc.Troubleshooting[i].Symptom); !strings.HasPrefix(res.Result, want) {
			t.Errorf("%s answered %q; its document's problem %d says %q", key, res.Result, i+1, doc.Troubleshooting[i].Symptom)
		}
		if key == "DENIED" && doc.Troubleshooting[3].Symptom != breaker.Message("DENIED", 0) {
			t.Errorf("breaker symptom %q, want %q", doc.Troubleshooting[3].Symptom, breaker.Message("DENIED", 0))
		}
	}
}

// registryAnswer is the registry as the tests read it.
type registryAnswer struct {
	Count    int
	Category string
	Order    string
	Document string
	Rows     []json.RawMessage
}

func registry(t testing.TB, n *capdir.Node, category string) (registryAnswer, string) {
	t.Helper()
	path := "/api/dispatch?registry=1"
	if category != "" {
		path += "&category=" + category
	}
	code, ctype, body := get(t, n, path, nodetest.Key)
	if code != 200 || ctype != "application/json" {
		t.Fatalf("%s: HTTP %d %s: %.300s", path, code, ctype, body)
	}
	var a registryAnswer
	decode(t, body, &a)
	if a.Count != len(a.Rows) {
		t.Fatalf("count %d for %d rows", a.Count, len(a.Rows))
	}
	return a, body
}

func registryKeys(t testing.TB, n *capdir.Node, category string) []string {
	t.Helper()
	a, _ := registry(t, n, category)
	keys := []string{}
	for _, raw := range a.Rows {
		var e struct{ Key string }
		decode(t, string(raw), &e)
		keys = append(keys, e.Key)
	}
	return keys
}

// The registry lists every enabled row compactly, in planner order, optionally of
// one category; never a content body, a target or a credential value.
func TestRegistryRoute(t *testing.T) {
	n := discoveryNode(t)
	mustDo(t, n, http.StatusCreated, "POST", "/api/directory", `{"key":"HIDDEN","type":"fn","target":"echo","content":"# WHAT: off","enabled":0}`)
	mustDo(t, n, http.StatusCreated, "POST", "/api/directory", `{"key":"AAA_LAST","type":"fn","target":"echo","content":"# WHAT: ranked last","planner_rank":500,"planner_visible":0}`)

	a, body := registry(t, n, "")
	keys := registryKeys(t, n, "")
	if want := []string{"ROUTER", "CONTENT_SEARCH", "GROK_MODELS", "NOW", "AAA_LAST"}; !slices.Equal(keys, want) {
		t.Errorf("registry keys %v, want %v (enabled rows by planner_rank, then canonical order)", keys, want)
	}
	if a.Document != "GET "+docBase+"/api/dispatch?key={key}&format=markdown" {
		t.Errorf("document = %q", a.Document)
	}
	want := `{"key":"GROK_MODELS","type":"http","category":"grok","description":"List every model on the xAI API. No args","args":"see content","risk":"low","credentialed":true,"planner_visible":true}`
	if string(a.Rows[2]) != want {
		t.Errorf("GROK_MODELS entry\n got %s\nwant %s", a.Rows[2], want)
	}
	for _, leak := range []string{docSecret, "GROK_API_KEY", "api.x.ai", "CONTENT_INDEX_QUERY", "You are the router", `"content":`, `"target":`} {
		if strings.Contains(body, leak) {
			t.Errorf("the registry shows %s", leak)
		}
	}
	if !strings.Contains(string(a.Rows[4]), `"planner_visible":false`) {
		t.Errorf("AAA_LAST entry = %s", a.Rows[4])
	}
	if keys := registryKeys(t, n, "grok"); !slices.Equal(keys, []string{"GROK_MODELS"}) {
		t.Errorf("category=grok lists %v", keys)
	}
	if a, body := registry(t, n, "none-such"); a.Count != 0 || !strings.Contains(body, `"rows":[]`) {
		t.Errorf("an empty category: %s", body)
	}
	if a, _ := registry(t, n, "grok"); a.Category != "grok" {
		t.Errorf("category=grok is echoed %q", a.Category)
	}
	// A category of any length is echoed clipped, as other echoed parameters are.
	long := strings.Repeat("c", 64<<10)
	if a, body := registry(t, n, long); a.Count != 0 || a.Category != strings.Repeat("c", 40)+"…" || len(body) > 1024 {
		t.Errorf("a 64 KiB category: echoed %d bytes, the answer %d bytes", len(a.Category), len(body))
	}
}

// The registry's size per object on a directory of 877 rows: every sample row
// and stand-in, repeated under numbered keys.
func TestRegistrySize877(t *testing.T) {
	n := nodetest.Start(t, nil)
	var rows []map[string]any
	for _, raw := range documentRows(t) {
		var m map[string]any
		decode(t, string(raw), &m)
		rows = append(rows, m)
	}
	var sample []map[string]any
	if err := json.Unmarshal(testdata.SampleRows(), &sample); err != nil {
		t.Fatal(err)
	}
	rows = append(rows, sample[2:]...) // PROMPT_LAB_AGENT, BLOOIO_FINISH, DIR_PATCH, ZZ_TEST_TEMPERATURE
	var nd strings.Builder
	enc := json.NewEncoder(&nd)
	for i := range 877 {
		row := rows[i%len(rows)]
		row["key"] = fmt.Sprintf("%s_%03d", strings.Split(rows[i%len(rows)]["key"].(string), "_")[0], i)
		enc.Encode(row)
	}
	code, body := send(t, n, "POST", "/api/directory/import", "application/x-ndjson", nd.String())
	if code != 200 || !strings.HasPrefix(body, `{"ok":877,`) {
		t.Fatalf("import: HTTP %d %.300s", code, body)
	}
	a, out := registry(t, n, "")
	if a.Count != 877 {
		t.Fatalf("count = %d", a.Count)
	}
	perObject := len(out) / a.Count
	t.Logf("registry of %d rows: %d bytes, %d bytes per object", a.Count, len(out), perObject)
	if perObject > 400 {
		t.Errorf("%d bytes per object: the registry is not compact", perObject)
	}
}
