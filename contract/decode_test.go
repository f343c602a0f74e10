package contract_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
)

func TestDecodeFieldsValues(t *testing.T) {
	f := mustDecode(t, `{"key":"K","type":"fn","auth":null,"enabled":false,"planner_visible":true,
		"sensitive":1,"planner_rank":7,"seq":-3,"examples":"[]","updated_at":"x","created_at":5,"row_num":412}`)
	v := f.Values
	if v.Key != "K" || v.Type != "fn" || v.Auth != "" {
		t.Errorf("text fields = %q %q %q", v.Key, v.Type, v.Auth)
	}
	if v.Enabled != 0 || v.PlannerVisible != 1 || v.Sensitive != 1 || v.PlannerRank != 7 {
		t.Errorf("flags = enabled %d planner_visible %d sensitive %d planner_rank %d",
			v.Enabled, v.PlannerVisible, v.Sensitive, v.PlannerRank)
	}
	if v.Seq == nil || *v.Seq != -3 {
		t.Errorf("seq = %v, want -3", v.Seq)
	}
	if v.UpdatedAt != "" || v.CreatedAt != "" || v.RowNum != 0 {
		t.Errorf("read-only fields were kept: %q %q %d", v.UpdatedAt, v.CreatedAt, v.RowNum)
	}
	want := []string{"key", "type", "auth", "updated_at", "seq", "enabled", "planner_visible",
		"planner_rank", "examples", "sensitive", "created_at", "row_num"}
	if got := f.Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if !f.Has("auth") || f.Has("target") || f.Has("nonsense") {
		t.Errorf("Has: auth %v target %v nonsense %v", f.Has("auth"), f.Has("target"), f.Has("nonsense"))
	}
}

// examples takes the JSON array itself or a string holding one; both store the
// same canonical JSON text, which validation accepts.
func TestDecodeFieldsExamplesArray(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"examples":["Ada", "Grace|42", "<b>&"]}`, `["Ada","Grace|42","<b>&"]`},
		{`{"examples":[ ]}`, `[]`},
		{`{"examples":"[\"Ada\"]"}`, `["Ada"]`},
		{`{"examples":"[\"Ada\", \"Grace\"]"}`, `["Ada","Grace"]`},
		{`{"examples":"[ \"<b>&\" ]"}`, `["<b>&"]`},
		{`{"examples":"Ada"}`, `Ada`},       // not an array: stored as sent, and validation refuses it
		{`{"examples":"[1, 2]"}`, `[1, 2]`}, // not strings: likewise
		{`{"examples":null}`, ``},
	} {
		f := mustDecode(t, tc.body)
		if !f.Has("examples") || f.Values.Examples != tc.want {
			t.Errorf("%s: examples = %q, want %q", tc.body, f.Values.Examples, tc.want)
		}
	}
	f := mustDecode(t, `{"key":"GREET","type":"fn","target":"echo","content":"# WHAT: greet","examples":["Ada"]}`)
	if _, err := contract.Create(f, time.Unix(0, 0)); err != nil {
		t.Fatalf("a row with examples as an array: %v", err)
	}
}

func TestDecodeFieldsSeqNull(t *testing.T) {
	f := mustDecode(t, `{"seq":null}`)
	if !f.Has("seq") || f.Values.Seq != nil {
		t.Fatalf("seq null: Has=%v Seq=%v", f.Has("seq"), f.Values.Seq)
	}
}

func TestDecodeFieldsErrors(t *testing.T) {
	tests := []struct {
		name string
		body string
		kind error
		want []string // substrings of the message
	}{
		{"empty", ``, contract.ErrMalformedJSON, []string{"malformed JSON: empty body"}},
		{"syntax", `{"key":}`, contract.ErrMalformedJSON, []string{"malformed JSON: invalid character '}'", "at byte"}},
		{"unclosed", `{"key":"K"`, contract.ErrMalformedJSON, []string{"malformed JSON: the body ends at byte 10, before the JSON object is closed"}},
		{"cut after a name", `{"key":`, contract.ErrMalformedJSON, []string{"malformed JSON: the body ends at byte 7, before the JSON object is closed"}},
		{"cut in a value", `{"key":"K`, contract.ErrMalformedJSON, []string{"malformed JSON: the body ends at byte 9, before the JSON object is closed"}},
		{"only an opening", ` {`, contract.ErrMalformedJSON, []string{"malformed JSON: the body ends at byte 2, before the JSON object is closed"}},
		{"array", `[{"key":"K"}]`, contract.ErrMalformedJSON, []string{"must be a JSON object", "got an array"}},
		{"trailing", `{"key":"K"} {}`, contract.ErrMalformedJSON, []string{"after the closing }"}},
		{"enabled string", `{"enabled":"yes"}`, contract.ErrWrongType,
			[]string{`enabled: must be 0 or 1 (a JSON number, or true/false), got string "yes"`}},
		{"planner_rank string", `{"planner_rank":"x"}`, contract.ErrWrongType,
			[]string{`planner_rank: must be an integer (a JSON number such as 100), got string "x"`}},
		{"planner_rank fraction", `{"planner_rank":1.5}`, contract.ErrWrongType, []string{"planner_rank: must be an integer", "got number 1.5"}},
		{"seq string", `{"seq":"a"}`, contract.ErrWrongType, []string{`seq: must be an integer or null, got string "a"`}},
		{"text number", `{"target":5}`, contract.ErrWrongType, []string{"target: must be a JSON string (or null), got number 5"}},
		{"text object", `{"content":{"a":1}}`, contract.ErrWrongType, []string{"content: must be a JSON string", "got object"}},
		{"enabled null", `{"enabled":null}`, contract.ErrWrongType, []string{"enabled: must be 0 or 1", "got null"}},
		{"unknown", `{"enabeld":1}`, contract.ErrUnknownField,
			[]string{`enabeld: unknown field; did you mean "enabled"?`, "the fields of a row are key, type, target"}},
		{"unknown far", `{"colour":"red"}`, contract.ErrUnknownField, []string{"colour: unknown field; the fields"}},
		{"examples array of numbers", `{"examples":["Ada",42]}`, contract.ErrWrongType,
			[]string{`examples: must be a JSON array of strings (or a string holding one), got array ["Ada",42]`}},
		{"examples array with null", `{"examples":[null]}`, contract.ErrWrongType, []string{"examples: must be a JSON array of strings"}},
		{"examples object", `{"examples":{"a":"b"}}`, contract.ErrWrongType, []string{"examples: must be a JSON string", "got object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := contract.DecodeFields([]byte(tt.body))
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("error %q is not %v", err, tt.kind)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestDecodeFieldsReportsEveryProblem(t *testing.T) {
	_, err := contract.DecodeFields([]byte(`{"enabled":"yes","bogus":1,"seq":"a","key":"OK"}`))
	var fields []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ve *contract.ValidationError
		if !errors.As(e, &ve) {
			t.Fatalf("%v is not a *ValidationError", e)
		}
		fields = append(fields, ve.Field)
	}
	if want := []string{"enabled", "bogus", "seq"}; !slices.Equal(fields, want) {
		t.Errorf("fields = %v, want %v", fields, want)
	}
}

func TestFieldsFromRow(t *testing.T) {
	r := contract.Row{Key: "K", Type: "fn", Seq: ptr(2), UpdatedAt: "u", CreatedAt: "c", RowNum: 9}
	f := contract.FieldsFromRow(r)
	if f.Has("updated_at") || f.Has("created_at") || f.Has("row_num") {
		t.Errorf("read-only fields present: %v", f.Names())
	}
	if got := len(f.Names()); got != 16 {
		t.Errorf("%d names, want the 16 writable columns: %v", got, f.Names())
	}
	*r.Seq = 5
	if *f.Values.Seq != 2 {
		t.Errorf("FieldsFromRow aliases seq")
	}
}
