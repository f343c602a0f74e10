package api_test

import (
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/nodetest"
)

// A row that can never run as written is written all the same (a function may
// be registered or renamed by a deploy), and the write's answer names, in
// "warnings", the literal every call of it will fail with: POST, PUT, PATCH and
// an import alike. A row that may run has no warnings.
func TestDirectoryWriteWarnings(t *testing.T) {
	n := nodetest.Start(t, nil)
	for _, c := range []struct {
		method, path, body string
		code               int
		warnings           string // the answer's "warnings", "" for none
	}{
		{"POST", "/api/directory", `{"key":"GOOD","type":"fn","target":"echo","content":"# WHAT: say\n[\"$1\"]"}`, 201, ""},
		{"POST", "/api/directory", `{"key":"GONE","type":"fn","target":"nosuch","content":"# WHAT: gone"}`, 201, `["ERR:fn:unknown_target:nosuch"]`},
		{"PUT", "/api/directory/OBJ", `{"type":"fn","target":"echo","content":"# WHAT: obj\n{\"a\":\"$1\"}"}`, 201, `["ERR:fn:content_not_array"]`},
		{"PATCH", "/api/directory/GOOD", `{"content":"# WHAT: say\n[\"$1\""}`, 200, `["ERR:fn:bad_content_json:unexpected end of JSON input"]`},
		{"PATCH", "/api/directory/GOOD", `{"content":"# WHAT: say\n[\"$1\"]"}`, 200, ""},
		{"POST", "/api/directory", `{"key":"STEPS","type":"flow","content":"# WHAT: two steps\nGOOD: x > GOOD"}`, 201, `["ERR:flow:bad_step:GOOD"]`},
	} {
		code, out := nodetest.Do(t, n, c.method, c.path, c.body)
		want := `"warnings":` + c.warnings
		if code != c.code || (c.warnings == "" && strings.Contains(out, `"warnings"`)) || (c.warnings != "" && !strings.Contains(out, want)) {
			t.Errorf("%s %s %s: %d %s; want %d with warnings %s", c.method, c.path, c.body, code, out, c.code, c.warnings)
		}
	}
	if code, out := nodetest.Do(t, n, "GET", "/api/directory/GONE", ""); code != 200 || !strings.Contains(out, `"target":"nosuch"`) {
		t.Fatalf("the warned row was not written: %d %s", code, out)
	}
	if code, out := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"GONE","body":"x"}`); code != 200 || !strings.Contains(out, `"result":"ERR:fn:unknown_target:nosuch"`) {
		t.Fatalf("a call of the warned row: %d %s", code, out)
	}

	rows := `{"key":"I_OK","type":"fn","target":"echo"}` + "\n" + `{"key":"I_GONE","type":"fn","target":"renamed"}` + "\n" + `{"key":"I_BAD","type":"lambda"}` + "\n"
	code, out := nodetest.Do(t, n, "POST", "/api/directory/import", rows)
	if want := `"warnings":[{"index":1,"line":2,"key":"I_GONE","warning":"ERR:fn:unknown_target:renamed"}]`; code != 200 ||
		!strings.Contains(out, `"ok":2`) || !strings.Contains(out, want) {
		t.Fatalf("import: %d %s; want 2 written and %s", code, out, want)
	}
}
