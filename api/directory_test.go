package api_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/internal/nodetest"
)

// samplePost is the body of the sample step 2, with "¤t=" restored to "&current=".
const samplePost = `{
"key": "ZZ_TEST_TEMPERATURE",
"type": "http",
"target": "GET https://api.open-meteo.com/v1/forecast?latitude=$1&longitude=$2&current=temperature_2m",
"auth": "",
"content": "# WHAT: Current temperature in Celsius for one latitude and longitude, from the Open-Meteo public API.\n# WHEN_TO_USE: a capability needs the live temperature at a coordinate.\n# ARGS: $1=latitude | $2=longitude\n# EX: [ZZ_TEST_TEMPERATURE]37.77|-122.42[/ZZ_TEST_TEMPERATURE]\n# OUTPUT: JSON with current.temperature_2m",
"category": "tools",
"enabled": 1,
"planner_visible": 1,
"examples": "[\"37.77|-122.42\"]"
}`

// The sample steps 2 and 5: the POST answers exactly the documented literal (the
// clock is pinned to the sample receipt time), the DELETE answers
// {"ok":true,"key":"ZZ_TEST_TEMPERATURE","deleted":1}, and a GET after it is 404.
func TestSampleStep2PostAndStep5Delete(t *testing.T) {
	at := time.Date(2026, 7, 26, 4, 36, 19, 832_000_000, time.UTC)
	n := nodetest.Start(t, nil, capdir.WithClock(func() time.Time { return at }))

	// Without the header: the sample 401, and nothing appended.
	before := nodetest.ControlSeq(t, n)
	status, body := nodetest.DoKey(t, n, "POST", "/api/directory", samplePost, "")
	if status != http.StatusUnauthorized || strings.TrimSpace(body) != `{"error":"unauthorized","how_to_fix":"send the owner key in the x-terminal-key header"}` {
		t.Fatalf("POST without x-terminal-key: HTTP %d %s", status, body)
	}
	if status, _ := nodetest.DoKey(t, n, "POST", "/api/directory", samplePost, "wrong-key-wrong-key-wrong"); status != http.StatusUnauthorized {
		t.Fatalf("POST with a wrong key: HTTP %d", status)
	}
	if got := nodetest.ControlSeq(t, n); got != before {
		t.Fatalf("unauthorized POST appended: control seq %d -> %d", before, got)
	}

	status, body = nodetest.Do(t, n, "POST", "/api/directory", samplePost)
	const want = `{"ok":true,"key":"ZZ_TEST_TEMPERATURE","updated_at":"2026-07-26T04:36:19.832Z"}`
	if status != http.StatusCreated || strings.TrimSpace(body) != want {
		t.Fatalf("POST: HTTP %d %s, want 201 %s", status, body, want)
	}

	// Read-your-writes: the row is there the moment the POST answered.
	var row contract.Row
	decode(t, mustDo(t, n, http.StatusOK, "GET", "/api/directory/ZZ_TEST_TEMPERATURE", ""), &row)
	if row.RowNum != 1 || row.Type != "http" || row.Category != "tools" || row.Enabled != 1 ||
		row.PlannerRank != contract.DefaultPlannerRank || row.Examples != `["37.77|-122.42"]` ||
		row.Target != "GET https://api.open-meteo.com/v1/forecast?latitude=$1&longitude=$2&current=temperature_2m" ||
		row.CreatedAt != "2026-07-26T04:36:19.832Z" {
		t.Fatalf("GET after POST: %+v", row)
	}

	status, body = nodetest.Do(t, n, "DELETE", "/api/directory/ZZ_TEST_TEMPERATURE", "")
	if status != http.StatusOK || strings.TrimSpace(body) != `{"ok":true,"key":"ZZ_TEST_TEMPERATURE","deleted":1}` {
		t.Fatalf("DELETE: HTTP %d %s", status, body)
	}
	status, body = nodetest.Do(t, n, "GET", "/api/directory/ZZ_TEST_TEMPERATURE", "")
	if status != http.StatusNotFound || strings.TrimSpace(body) != `{"error":"not_found","key":"ZZ_TEST_TEMPERATURE"}` {
		t.Fatalf("GET after DELETE: HTTP %d %s", status, body)
	}
	before = nodetest.ControlSeq(t, n)
	if status, _ := nodetest.Do(t, n, "DELETE", "/api/directory/ZZ_TEST_TEMPERATURE", ""); status != http.StatusNotFound {
		t.Fatalf("second DELETE: HTTP %d, want 404", status)
	}
	if got := nodetest.ControlSeq(t, n); got != before {
		t.Fatalf("DELETE of an absent key appended")
	}

	// The log holds exactly one event per accepted write, by the owner.
	ms := nodetest.Mutations(t, n, "ZZ_TEST_TEMPERATURE")
	if len(ms) != 2 || ms[0].Action != contract.ActionCreate || ms[0].Row == nil || ms[0].Row.Category != "tools" ||
		ms[1].Action != contract.ActionDelete || ms[1].Row != nil {
		t.Fatalf("mutations = %+v", ms)
	}
	for _, m := range ms {
		if m.Actor != "owner:terminal-key" {
			t.Errorf("actor = %q", m.Actor)
		}
	}

	// A key can be created again after its delete (the expected sequence is the delete's).
	mustDo(t, n, http.StatusCreated, "POST", "/api/directory", samplePost)
}

// Every refusal answers its literal, or a message that says what to fix, and appends
// nothing to the log.
func TestDirectoryRefusalsAppendNothing(t *testing.T) {
	n := nodetest.Start(t, nil)
	mustDo(t, n, http.StatusCreated, "POST", "/api/directory", samplePost)
	// A legacy row: POST requires only key and type, so it may lack a description.
	mustDo(t, n, http.StatusCreated, "POST", "/api/directory", `{"key":"LEGACY","type":"fn","target":"now"}`)

	missingDesc := string(contract.Hygiene(&contract.Row{Key: "X", Type: "fn"}).Body())
	highRisk := string(contract.Hygiene(&contract.Row{Key: "X", Type: "fn", Content: "# WHAT: x", Sensitive: 1}).Body())
	if !strings.Contains(missingDesc, `"error":"registry_hygiene_refused: missing_description"`) ||
		!strings.Contains(highRisk, `"error":"registry_hygiene_refused: high_risk_missing_schema"`) {
		t.Fatalf("unexpected refusal bodies %s %s", missingDesc, highRisk)
	}
	desc := `"content":"# WHAT: Reads a thing.\n# ARGS: none"`

	cases := []struct {
		name, method, path, body, key string
		status                        int
		exact                         string // the whole body, when set
		contains                      string // else a substring of "error"
	}{
		{name: "unauthorized GET", method: "GET", path: "/api/directory/ZZ_TEST_TEMPERATURE", key: "-",
			status: 401, exact: `{"error":"unauthorized","how_to_fix":"send the owner key in the x-terminal-key header"}`},
		{name: "unauthorized PATCH", method: "PATCH", path: "/api/directory/ZZ_TEST_TEMPERATURE", body: `{"category":"x"}`, key: "-",
			status: 401, exact: `{"error":"unauthorized","how_to_fix":"send the owner key in the x-terminal-key header"}`},
		{name: "unauthorized import", method: "POST", path: "/api/directory/import", body: `[]`, key: "-",
			status: 401, exact: `{"error":"unauthorized","how_to_fix":"send the owner key in the x-terminal-key header"}`},
		{name: "no recognized fields", method: "PATCH", path: "/api/directory/ZZ_TEST_TEMPERATURE", body: `{"runner":"edge"}`,
			status: 400, exact: `{"error":"no recognized fields"}`},
		{name: "no recognized fields (sensitive)", method: "PATCH", path: "/api/directory/ZZ_TEST_TEMPERATURE", body: `{"sensitive":1,"runner":"edge"}`,
			status: 400, exact: `{"error":"no recognized fields"}`},
		{name: "PUT without docstring", method: "PUT", path: "/api/directory/ZZ_TEST_TEMPERATURE", body: `{"type":"http","target":"GET https://example.com/x"}`,
			status: 400, exact: missingDesc},
		{name: "PUT creating without docstring", method: "PUT", path: "/api/directory/NEW_ROW", body: `{"type":"fn"}`,
			status: 400, exact: missingDesc},
		{name: "PATCH emptying content of a compliant row", method: "PATCH", path: "/api/directory/ZZ_TEST_TEMPERATURE", body: `{"content":""}`,
			status: 400, exact: missingDesc},
		{name: "PATCH nulling content of a compliant row", method: "PATCH", path: "/api/directory/ZZ_TEST_TEMPERATURE", body: `{"content":null,"category":"x"}`,
			status: 400, exact: missingDesc},
		{name: "PUT sensitive without input_schema", method: "PUT", path: "/api/directory/ZZ_TEST_TEMPERATURE", body: `{"type":"fn","sensitive":1,` + desc + `}`,
			status: 400, exact: highRisk},
		{name: "POST sensitive without input_schema", method: "POST", path: "/api/directory", body: `{"key":"RISKY","type":"fn","sensitive":1,` + desc + `}`,
			status: 400, exact: highRisk},
		{name: "input_schema not JSON", method: "PATCH", path: "/api/directory/ZZ_TEST_TEMPERATURE", body: `{"input_schema":"{not json"}`,
			status: 400, contains: "input_schema: must be a JSON Schema"},
		{name: "input_schema not a schema", method: "POST", path: "/api/directory", body: `{"key":"S","type":"fn","input_schema":"{\"type\":\"nonsense\"}"}`,
			status: 400, contains: "input_schema: is not a valid JSON Schema"},
		{name: "input_schema remote ref", method: "POST", path: "/api/directory", body: `{"key":"S","type":"fn","input_schema":"{\"$ref\":\"https://example.com/s.json\"}"}`,
			status: 400, contains: "input_schema"},
		{name: "examples not an array of strings", method: "PATCH", path: "/api/directory/ZZ_TEST_TEMPERATURE", body: `{"examples":"[1,2]"}`,
			status: 400, contains: "examples: must be a JSON array of argument strings"},
		{name: "examples not JSON", method: "POST", path: "/api/directory", body: `{"key":"E","type":"fn","examples":"37.77|-122.42"}`,
			status: 400, contains: "examples: must be a JSON array"},
		{name: "unknown type", method: "POST", path: "/api/directory", body: `{"key":"T","type":"lambda"}`,
			status: 400, contains: `type: must be one of fn, http, agent, flow; got "lambda"`},
		{name: "unknown type by PATCH", method: "PATCH", path: "/api/directory/ZZ_TEST_TEMPERATURE", body: `{"type":"shell"}`,
			status: 400, contains: "type: must be one of fn, http, agent, flow"},
		{name: "missing type", method: "POST", path: "/api/directory", body: `{"key":"T"}`,
			status: 400, contains: "type: is required"},
		{name: "missing key", method: "POST", path: "/api/directory", body: `{"type":"fn"}`,
			status: 400, contains: "key: is required"},
		{name: "bad key characters", method: "POST", path: "/api/directory", body: `{"key":"BAD.KEY","type":"fn"}`,
			status: 400, contains: "key: must be 1 to 128 characters from A-Z, a-z, 0-9, '_' and '-'"},
		{name: "bad key characters (wildcard)", method: "POST", path: "/api/directory", body: `{"key":"A>","type":"fn"}`,
			status: 400, contains: "key: must be"},
		{name: "bad key characters in the path", method: "PUT", path: "/api/directory/BAD.KEY", body: `{"type":"fn",` + desc + `}`,
			status: 400, contains: "key: must be"},
		{name: "bad key characters (space) in the path", method: "PATCH", path: "/api/directory/A%20B", body: `{"category":"x"}`,
			status: 400, contains: "key: must be"},
		{name: "malformed JSON", method: "POST", path: "/api/directory", body: `{"key":"M","type":`,
			status: 400, contains: "malformed JSON"},
		{name: "malformed JSON (not an object)", method: "PUT", path: "/api/directory/M", body: `["key"]`,
			status: 400, contains: "malformed JSON: the body must be a JSON object"},
		{name: "empty body", method: "PATCH", path: "/api/directory/ZZ_TEST_TEMPERATURE", body: ``,
			status: 400, contains: "malformed JSON: empty body"},
		{name: "wrong type: enabled", method: "PATCH", path: "/api/directory/ZZ_TEST_TEMPERATURE", body: `{"enabled":"yes"}`,
			status: 400, contains: `enabled: must be 0 or 1 (a JSON number, or true/false), got string "yes"`},
		{name: "wrong type: planner_rank", method: "POST", path: "/api/directory", body: `{"key":"W","type":"fn","planner_rank":"high"}`,
			status: 400, contains: "planner_rank: must be an integer"},
		{name: "wrong type: content", method: "PUT", path: "/api/directory/ZZ_TEST_TEMPERATURE", body: `{"type":"fn","content":42}`,
			status: 400, contains: "content: must be a JSON string"},
		{name: "several problems at once", method: "POST", path: "/api/directory", body: `{"key":"W","type":"fn","enabled":"yes","colour":"red"}`,
			status: 400, contains: `enabled: must be 0 or 1 (a JSON number, or true/false), got string "yes"; colour: unknown field`},
		{name: "flag out of range", method: "PATCH", path: "/api/directory/ZZ_TEST_TEMPERATURE", body: `{"planner_visible":2}`,
			status: 400, contains: "planner_visible: must be 0 or 1, got 2"},
		{name: "http target without a method", method: "PATCH", path: "/api/directory/ZZ_TEST_TEMPERATURE", body: `{"target":"https://example.com"}`,
			status: 400, contains: `target: must be "METHOD url"`},
		{name: "PUT renaming", method: "PUT", path: "/api/directory/ZZ_TEST_TEMPERATURE", body: `{"key":"OTHER","type":"fn",` + desc + `}`,
			status: 400, contains: "a PUT cannot rename a row"},
		{name: "POST of a present key", method: "POST", path: "/api/directory", body: samplePost,
			status: 409, exact: `{"error":"exists: ZZ_TEST_TEMPERATURE is already in the directory; PUT /api/directory/ZZ_TEST_TEMPERATURE replaces it and PATCH changes some of its fields","key":"ZZ_TEST_TEMPERATURE"}`},
		{name: "PATCH of an absent key", method: "PATCH", path: "/api/directory/NOPE", body: `{"category":"x"}`,
			status: 404, exact: `{"error":"not_found","key":"NOPE"}`},
		{name: "DELETE of an absent key", method: "DELETE", path: "/api/directory/NOPE",
			status: 404, exact: `{"error":"not_found","key":"NOPE"}`},
		{name: "body too large", method: "POST", path: "/api/directory", body: `{"key":"BIG","type":"fn","content":"` + strings.Repeat("x", 5<<20) + `"}`,
			status: 413, contains: "payload_too_large: the row is 5242918 bytes; the limit is 4194304"},
		{name: "list: bad limit", method: "GET", path: "/api/directory?limit=-1",
			status: 400, contains: "limit must be an integer of at least 1"},
		{name: "list: bad enabled", method: "GET", path: "/api/directory?enabled=maybe",
			status: 400, contains: "enabled must be 0 or 1"},
		{name: "list: unknown type", method: "GET", path: "/api/directory?type=lambda",
			status: 400, contains: "type must be one of fn, http, agent, flow"},
		{name: "import: bad mode", method: "POST", path: "/api/directory/import?mode=merge", body: `[]`,
			status: 400, contains: "mode must be create (the default) or upsert"},
		{name: "import: malformed array", method: "POST", path: "/api/directory/import", body: `[{"key":"A","type":"fn"},{"key":`,
			status: 400, contains: "malformed JSON: the body starts with '[' but is not a well-formed JSON array"},
		{name: "import: empty body", method: "POST", path: "/api/directory/import", body: ` `,
			status: 400, contains: "malformed JSON: empty body"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := nodetest.Key
			if tc.key == "-" {
				key = ""
			}
			before := nodetest.ControlSeq(t, n)
			status, body := nodetest.DoKey(t, n, tc.method, tc.path, tc.body, key)
			if status != tc.status {
				t.Errorf("HTTP %d, want %d: %s", status, tc.status, body)
			}
			if tc.exact != "" && strings.TrimSpace(body) != tc.exact {
				t.Errorf("body\n got %s\nwant %s", strings.TrimSpace(body), tc.exact)
			}
			if tc.contains != "" {
				var e struct {
					Error string `json:"error"`
				}
				decode(t, body, &e)
				if !strings.Contains(e.Error, tc.contains) {
					t.Errorf("error %q does not contain %q", e.Error, tc.contains)
				}
			}
			if got := nodetest.ControlSeq(t, n); got != before {
				t.Errorf("refused request appended to the log: control seq %d -> %d", before, got)
			}
		})
	}

	// The refused writes left both rows as they were.
	var row contract.Row
	decode(t, mustDo(t, n, 200, "GET", "/api/directory/ZZ_TEST_TEMPERATURE", ""), &row)
	if row.Category != "tools" || row.Sensitive != 0 || row.Runner != "" || !strings.HasPrefix(row.Content, "# WHAT: Current temperature") {
		t.Errorf("row changed by refused writes: %+v", row)
	}
	if n := len(nodetest.Mutations(t, n, "ZZ_TEST_TEMPERATURE")); n != 1 {
		t.Errorf("%d mutations of ZZ_TEST_TEMPERATURE, want 1", n)
	}
}

// The hygiene gate is asymmetric: a legacy row without a description stays editable
// by an unrelated PATCH, while PUT refuses it whole.
func TestPatchAsymmetricHygiene(t *testing.T) {
	n := nodetest.Start(t, nil)
	mustDo(t, n, http.StatusCreated, "POST", "/api/directory", `{"key":"LEGACY","type":"fn","target":"now"}`)

	body := mustDo(t, n, http.StatusOK, "PATCH", "/api/directory/LEGACY", `{"category":"maintenance","planner_rank":5}`)
	var resp struct {
		OK      bool     `json:"ok"`
		Key     string   `json:"key"`
		Ignored []string `json:"ignored"`
	}
	decode(t, body, &resp)
	if !resp.OK || resp.Key != "LEGACY" || resp.Ignored != nil {
		t.Fatalf("PATCH answered %s", body)
	}
	var row contract.Row
	decode(t, mustDo(t, n, http.StatusOK, "GET", "/api/directory/LEGACY", ""), &row)
	if row.Category != "maintenance" || row.PlannerRank != 5 || row.Content != "" {
		t.Fatalf("row after PATCH: %+v", row)
	}

	// Fields outside the allow-list are reported as ignored when others apply.
	body = mustDo(t, n, http.StatusOK, "PATCH", "/api/directory/LEGACY", `{"runner":"edge","sensitive":1,"includes":"BLOCK_A"}`)
	decode(t, body, &resp)
	if strings.Join(resp.Ignored, ",") != "sensitive,runner" {
		t.Fatalf("ignored = %v (%s)", resp.Ignored, body)
	}
	decode(t, mustDo(t, n, http.StatusOK, "GET", "/api/directory/LEGACY", ""), &row)
	if row.Sensitive != 0 || row.Runner != "" || row.Includes != "BLOCK_A" {
		t.Fatalf("row after PATCH with ignored fields: %+v", row)
	}

	// The PATCH that fixes the row is accepted; from then on it cannot regress.
	mustDo(t, n, http.StatusOK, "PATCH", "/api/directory/LEGACY", `{"content":"# WHAT: Returns now."}`)
	before := nodetest.ControlSeq(t, n)
	status, got := nodetest.Do(t, n, "PATCH", "/api/directory/LEGACY", `{"content":"# ARGS:"}`)
	if status != http.StatusBadRequest || !strings.Contains(got, "registry_hygiene_refused: missing_description") {
		t.Fatalf("regressing PATCH: HTTP %d %s", status, got)
	}
	if nodetest.ControlSeq(t, n) != before {
		t.Fatal("refused PATCH appended")
	}
}

// PUT creates (201) when the key is absent and replaces (200) when present, keeping
// created_at and resetting absent fields to their defaults.
func TestPutCreatesThenReplaces(t *testing.T) {
	n := nodetest.Start(t, nil)
	put := `{"type":"fn","target":"now","planner_rank":%d,"category":"c","content":"# WHAT: Now."}`
	body := mustDo(t, n, http.StatusCreated, "PUT", "/api/directory/NOW", fmt.Sprintf(put, 7))
	if !regexp.MustCompile(`^\{"ok":true,"key":"NOW","updated_at":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"\}$`).MatchString(strings.TrimSpace(body)) {
		t.Fatalf("PUT answered %s", body)
	}
	var first, second contract.Row
	decode(t, mustDo(t, n, http.StatusOK, "GET", "/api/directory/NOW", ""), &first)
	time.Sleep(2 * time.Millisecond)
	mustDo(t, n, http.StatusOK, "PUT", "/api/directory/NOW", `{"key":"NOW","type":"fn","content":"# WHAT: Now, again.","updated_at":"ignored","row_num":9}`)
	decode(t, mustDo(t, n, http.StatusOK, "GET", "/api/directory/NOW", ""), &second)
	if second.CreatedAt != first.CreatedAt || second.UpdatedAt == first.UpdatedAt ||
		second.PlannerRank != contract.DefaultPlannerRank || second.Category != "" || second.Target != "" {
		t.Fatalf("after replace: %+v (first %+v)", second, first)
	}
	ms := nodetest.Mutations(t, n, "NOW")
	if len(ms) != 2 || ms[0].Action != contract.ActionCreate || ms[1].Action != contract.ActionReplace {
		t.Fatalf("mutations: %+v", ms)
	}
}
