package contract_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/capdir/capdir/contract"
)

func validRow() contract.Row {
	return contract.Row{Key: "K", Type: "fn", Enabled: 1, PlannerVisible: 1, PlannerRank: 100}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(r *contract.Row)
		field string // "" means valid
		kind  error
		want  string
	}{
		{"valid", func(r *contract.Row) {}, "", nil, ""},
		{"key max length", func(r *contract.Row) { r.Key = strings.Repeat("A", 128) }, "", nil, ""},
		{"key chars", func(r *contract.Row) { r.Key = "a-Z_09" }, "", nil, ""},
		{"key empty", func(r *contract.Row) { r.Key = "" }, "key", contract.ErrRequired, "key: is required"},
		{"key too long", func(r *contract.Row) { r.Key = strings.Repeat("A", 129) }, "key", contract.ErrInvalid,
			"key: must be 1 to 128 characters from A-Z, a-z, 0-9, '_' and '-' (no dots, spaces, '*' or '>')"},
		{"key dot", func(r *contract.Row) { r.Key = "A.B" }, "key", contract.ErrInvalid, `got "A.B"`},
		{"key space", func(r *contract.Row) { r.Key = "A B" }, "key", contract.ErrInvalid, "key: must be"},
		{"key star", func(r *contract.Row) { r.Key = "A*" }, "key", contract.ErrInvalid, "key: must be"},
		{"key gt", func(r *contract.Row) { r.Key = "A>" }, "key", contract.ErrInvalid, "key: must be"},
		{"key unicode", func(r *contract.Row) { r.Key = "Ä" }, "key", contract.ErrInvalid, "key: must be"},
		{"type empty", func(r *contract.Row) { r.Type = "" }, "type", contract.ErrRequired, "type: is required: one of fn, http, agent, flow"},
		{"type unknown", func(r *contract.Row) { r.Type = "sql" }, "type", contract.ErrInvalid,
			`type: must be one of fn, http, agent, flow; got "sql"`},
		{"type case", func(r *contract.Row) { r.Type = "HTTP" }, "type", contract.ErrInvalid, "type: must be one of"},
		{"http target ok", func(r *contract.Row) { r.Type, r.Target = "http", "PATCH https://x/api/directory/$1" }, "", nil, ""},
		{"http target empty ok", func(r *contract.Row) { r.Type, r.Target = "http", "" }, "", nil, ""},
		{"http target no method", func(r *contract.Row) { r.Type, r.Target = "http", "https://x" }, "target", contract.ErrInvalid,
			`target: must be "METHOD url" for an http row`},
		{"http target bad method", func(r *contract.Row) { r.Type, r.Target = "http", "FETCH https://x" }, "target", contract.ErrInvalid,
			`target: method "FETCH" is not one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, TRACE, CONNECT`},
		{"http target lower method", func(r *contract.Row) { r.Type, r.Target = "http", "get https://x" }, "target", contract.ErrInvalid, "(upper case)"},
		{"http target extra", func(r *contract.Row) { r.Type, r.Target = "http", "GET https://x y" }, "target", contract.ErrInvalid, `"METHOD url"`},
		{"fn target free", func(r *contract.Row) { r.Target = "any thing" }, "", nil, ""},
		{"schema ok", func(r *contract.Row) {
			r.InputSchema = `{"type":"object","properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string"}}}`
		}, "", nil, ""},
		{"schema draft-07", func(r *contract.Row) {
			r.InputSchema = `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`
		}, "", nil, ""},
		{"schema not json", func(r *contract.Row) { r.InputSchema = `{type:object}` }, "input_schema", contract.ErrInvalid,
			"input_schema: must be a JSON Schema as a JSON string; it is not valid JSON"},
		{"schema bad keyword value", func(r *contract.Row) { r.InputSchema = `{"type":"integr"}` }, "input_schema", contract.ErrInvalid,
			"input_schema: is not a valid JSON Schema"},
		{"schema remote ref", func(r *contract.Row) { r.InputSchema = `{"$ref":"https://example.com/s.json"}` }, "input_schema", contract.ErrInvalid,
			"$ref to https://example.com/s.json refused"},
		{"schema relative ref", func(r *contract.Row) { r.InputSchema = `{"$ref":"other.json"}` }, "input_schema", contract.ErrInvalid,
			"$ref to mem:///other.json refused: input_schema must be self-contained"},
		{"schema file ref", func(r *contract.Row) { r.InputSchema = `{"$ref":"file:///etc/passwd"}` }, "input_schema", contract.ErrInvalid, "refused"},
		{"schema unknown metaschema", func(r *contract.Row) { r.InputSchema = `{"$schema":"https://example.com/meta"}` }, "input_schema", contract.ErrInvalid, "refused"},
		{"examples ok", func(r *contract.Row) { r.Examples = `["37.77|-122.42"]` }, "", nil, ""},
		{"examples empty array", func(r *contract.Row) { r.Examples = `[]` }, "", nil, ""},
		{"examples numbers", func(r *contract.Row) { r.Examples = `[1]` }, "examples", contract.ErrInvalid,
			`examples: must be a JSON array of argument strings`},
		{"examples object", func(r *contract.Row) { r.Examples = `{"a":"b"}` }, "examples", contract.ErrInvalid, "examples: must be"},
		{"examples null", func(r *contract.Row) { r.Examples = `null` }, "examples", contract.ErrInvalid, "examples: must be"},
		{"enabled 2", func(r *contract.Row) { r.Enabled = 2 }, "enabled", contract.ErrInvalid, "enabled: must be 0 or 1, got 2"},
		{"planner_visible -1", func(r *contract.Row) { r.PlannerVisible = -1 }, "planner_visible", contract.ErrInvalid, "planner_visible: must be 0 or 1, got -1"},
		{"sensitive 5", func(r *contract.Row) { r.Sensitive = 5 }, "sensitive", contract.ErrInvalid, "sensitive: must be 0 or 1, got 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := validRow()
			tt.edit(&r)
			err := contract.Validate(&r)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			var ve *contract.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %v is not a *ValidationError", err)
			}
			if ve.Field != tt.field {
				t.Errorf("Field = %q, want %q", ve.Field, tt.field)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("error %q is not %v", err, tt.kind)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestValidateJoinsProblems(t *testing.T) {
	r := contract.Row{Key: "a.b", Type: "sql", Enabled: 3, PlannerVisible: 1, Examples: "x"}
	err := contract.Validate(&r)
	got := strings.Split(err.Error(), "\n")
	if len(got) != 4 {
		t.Fatalf("want 4 problems (key, type, examples, enabled), got %d:\n%v", len(got), err)
	}
	for i, prefix := range []string{"key:", "type:", "examples:", "enabled:"} {
		if !strings.HasPrefix(got[i], prefix) {
			t.Errorf("problem %d = %q, want prefix %q", i, got[i], prefix)
		}
	}
}

func TestParseHTTPTarget(t *testing.T) {
	m, u, err := contract.ParseHTTPTarget("  GET https://api.x.ai/v1/models ")
	if err != nil || m != "GET" || u != "https://api.x.ai/v1/models" {
		t.Fatalf("got %q %q %v", m, u, err)
	}
}

func TestCompileSchemaValidates(t *testing.T) {
	s, err := contract.CompileSchema(`{"type":"object","required":["lat"]}`)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(map[string]any{}); err == nil {
		t.Error("schema accepted an object without the required property")
	}
	if err := s.Validate(map[string]any{"lat": 1}); err != nil {
		t.Errorf("schema refused a valid instance: %v", err)
	}
}
