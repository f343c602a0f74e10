package contract_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
)

func TestFormatTime(t *testing.T) {
	pst := time.FixedZone("PDT", -7*3600)
	got := contract.FormatTime(time.Date(2026, 7, 25, 21, 36, 19, 832_400_000, pst))
	if got != "2026-07-26T04:36:19.832Z" {
		t.Fatalf("FormatTime = %s", got)
	}
	if got := contract.FormatTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); got != "2026-01-02T03:04:05.000Z" {
		t.Fatalf("FormatTime = %s", got)
	}
}

func TestCreateDefaults(t *testing.T) {
	r, err := contract.Create(mustDecode(t, `{"key":"K","type":"fn","updated_at":"old","created_at":"old"}`), now)
	if err != nil {
		t.Fatal(err)
	}
	want := contract.Row{Key: "K", Type: "fn", Enabled: 1, PlannerVisible: 1, PlannerRank: 100,
		UpdatedAt: "2026-07-26T04:36:19.832Z", CreatedAt: "2026-07-26T04:36:19.832Z"}
	if r != want {
		t.Fatalf("Create = %+v\nwant %+v", r, want)
	}
}

func TestCreateKeepsExplicitValues(t *testing.T) {
	r, err := contract.Create(mustDecode(t, `{"key":"K","type":"fn","enabled":0,"planner_visible":false,
		"planner_rank":5,"sensitive":1,"input_schema":"{}","runner":"edge","seq":3}`), now)
	if err != nil {
		t.Fatal(err)
	}
	if r.Enabled != 0 || r.PlannerVisible != 0 || r.PlannerRank != 5 || r.Sensitive != 1 ||
		r.Runner != "edge" || r.Seq == nil || *r.Seq != 3 {
		t.Fatalf("Create = %+v", r)
	}
}

func TestCreateErrors(t *testing.T) {
	tests := []struct {
		name string
		body string
		is   error
		want string
	}{
		{"no key", `{"type":"fn"}`, contract.ErrRequired, "key: is required"},
		{"no type", `{"key":"K"}`, contract.ErrRequired, "type: is required"},
		{"neither", `{}`, contract.ErrRequired, "key: is required"},
		{"bad key", `{"key":"a.b","type":"fn"}`, contract.ErrInvalid, "key: must be"},
		{"high risk", `{"key":"K","type":"fn","content":"# WHAT: x","sensitive":1}`, contract.ErrHygieneRefused,
			"registry_hygiene_refused: high_risk_missing_schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := contract.Create(mustDecode(t, tt.body), now)
			if !errors.Is(err, tt.is) || !strings.Contains(fmtErr(err), tt.want) {
				t.Fatalf("err = %v, want %v containing %q", err, tt.is, tt.want)
			}
		})
	}
}

func fmtErr(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func TestCreateSkipsMissingDescription(t *testing.T) {
	r, err := contract.Create(mustDecode(t, `{"key":"K","type":"fn"}`), now)
	if err != nil {
		t.Fatalf("POST with key and type only refused: %v", err)
	}
	if contract.Hygiene(&r) == nil {
		t.Fatal("test premise: the row should lack a description")
	}
}

func TestReplace(t *testing.T) {
	old := sampleRow(t, "ZZ_TEST_TEMPERATURE")
	later := now.Add(time.Hour)
	r, err := contract.Replace("ZZ_TEST_TEMPERATURE", &old, mustDecode(t, `{"type":"fn","content":"# WHAT: w"}`), later)
	if err != nil {
		t.Fatal(err)
	}
	want := contract.Row{Key: "ZZ_TEST_TEMPERATURE", Type: "fn", Content: "# WHAT: w", Enabled: 1, PlannerVisible: 1,
		PlannerRank: 100, CreatedAt: old.CreatedAt, UpdatedAt: "2026-07-26T05:36:19.832Z"}
	if r != want {
		t.Fatalf("Replace = %+v\nwant %+v", r, want)
	}
}

func TestReplaceRoundTripsGET(t *testing.T) {
	// A row as GET returns it (with row_num and timestamps) can be PUT back unchanged.
	old := sampleRow(t, "GROK_MODELS")
	raw := sampleRaw(t)[1]
	r, err := contract.Replace("GROK_MODELS", &old, mustDecode(t, string(raw)), now)
	if err != nil {
		t.Fatal(err)
	}
	old.UpdatedAt = contract.FormatTime(now)
	if r != old {
		t.Fatalf("round trip changed the row:\n got %+v\nwant %+v", r, old)
	}
}

func TestReplaceCreates(t *testing.T) {
	r, err := contract.Replace("NEW", nil, mustDecode(t, `{"type":"agent","content":"Be brief."}`), now)
	if err != nil {
		t.Fatal(err)
	}
	if r.Key != "NEW" || r.CreatedAt != "2026-07-26T04:36:19.832Z" || r.UpdatedAt != r.CreatedAt {
		t.Fatalf("Replace(nil) = %+v", r)
	}
}

func TestReplaceErrors(t *testing.T) {
	old := sampleRow(t, "NOW")
	tests := []struct {
		name string
		body string
		is   error
		want string
	}{
		{"key mismatch", `{"key":"OTHER","type":"fn","content":"# WHAT: x"}`, contract.ErrKeyMismatch,
			`key: is "OTHER" in the body but "NOW" in the path`},
		{"no type", `{"content":"# WHAT: x"}`, contract.ErrRequired, "type: is required"},
		{"missing description", `{"type":"fn"}`, contract.ErrHygieneRefused, "registry_hygiene_refused: missing_description"},
		{"high risk", `{"type":"fn","content":"# WHAT: x","sensitive":1}`, contract.ErrHygieneRefused,
			"registry_hygiene_refused: high_risk_missing_schema"},
		{"invalid before hygiene", `{"type":"fn","enabled":7}`, contract.ErrInvalid, "enabled: must be 0 or 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := contract.Replace("NOW", &old, mustDecode(t, tt.body), now)
			if !errors.Is(err, tt.is) || !strings.Contains(fmtErr(err), tt.want) {
				t.Fatalf("err = %v, want %v containing %q", err, tt.is, tt.want)
			}
		})
	}
}

func TestPatchAllowList(t *testing.T) {
	want := []string{"type", "target", "auth", "content", "category", "allowed_categories", "seq",
		"enabled", "planner_visible", "planner_rank", "input_schema", "examples", "includes"}
	if !slices.Equal(contract.PatchAllowList, want) {
		t.Fatalf("PatchAllowList = %v", contract.PatchAllowList)
	}
}

func TestPatchMerges(t *testing.T) {
	old := sampleRow(t, "ZZ_TEST_TEMPERATURE")
	later := now.Add(90 * time.Second)
	r, ignored, err := contract.Patch(old, mustDecode(t, `{"examples":"[\"51.51|-0.13\"]","seq":4,"runner":"edge","updated_at":"x"}`), later)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"updated_at", "runner"}; !slices.Equal(ignored, want) {
		t.Errorf("ignored = %v, want %v", ignored, want)
	}
	want := old
	want.Examples = `["51.51|-0.13"]`
	want.Seq = ptr(4)
	want.UpdatedAt = "2026-07-26T04:37:49.832Z"
	if r.Seq == nil || *r.Seq != 4 {
		t.Fatalf("seq = %v", r.Seq)
	}
	r.Seq, want.Seq = nil, nil
	if r != want {
		t.Fatalf("Patch = %+v\nwant %+v", r, want)
	}
}

func TestPatchClearsSeqAndDoesNotAlias(t *testing.T) {
	old := contract.Row{Key: "K", Type: "fn", Content: "# WHAT: x", Seq: ptr(1), Enabled: 1, PlannerVisible: 1}
	r, _, err := contract.Patch(old, mustDecode(t, `{"seq":null}`), now)
	if err != nil || r.Seq != nil {
		t.Fatalf("seq null: %v %v", r.Seq, err)
	}
	r, _, _ = contract.Patch(old, mustDecode(t, `{"category":"c"}`), now)
	*r.Seq = 9
	if *old.Seq != 1 {
		t.Fatal("Patch result shares seq with old")
	}
}

func TestPatchNoRecognizedFields(t *testing.T) {
	old := sampleRow(t, "ZZ_TEST_TEMPERATURE")
	for _, body := range []string{`{"runner":"edge"}`, `{"sensitive":1}`, `{"key":"X"}`, `{}`, `{"updated_at":"x"}`} {
		_, ignored, err := contract.Patch(old, mustDecode(t, body), now)
		if err != contract.ErrNoRecognizedFields || err.Error() != "no recognized fields" {
			t.Errorf("%s: err = %v, want ErrNoRecognizedFields", body, err)
		}
		if len(ignored) != len(mustDecode(t, body).Names()) {
			t.Errorf("%s: ignored = %v", body, ignored)
		}
	}
}

func TestPatchHygieneAsymmetry(t *testing.T) {
	compliant := contract.Row{Key: "K", Type: "fn", Content: "# WHAT: x", Enabled: 1, PlannerVisible: 1,
		Sensitive: 1, InputSchema: `{"type":"object"}`}
	legacy := contract.Row{Key: "L", Type: "fn", Content: `["$1"]`, Enabled: 1, PlannerVisible: 1}
	legacySensitive := contract.Row{Key: "S", Type: "fn", Content: `["$1"]`, Enabled: 1, PlannerVisible: 1,
		Sensitive: 1, InputSchema: `{}`}
	tests := []struct {
		name string
		old  contract.Row
		body string
		want string // refusal code, or "" for accepted
	}{
		{"compliant, unrelated edit", compliant, `{"category":"c"}`, ""},
		{"compliant, empties content", compliant, `{"content":""}`, contract.CodeMissingDescription},
		{"compliant, payload only", compliant, `{"content":"[\"$1\"]"}`, contract.CodeMissingDescription},
		{"compliant, drops schema", compliant, `{"input_schema":""}`, contract.CodeHighRiskMissingSchema},
		{"legacy, unrelated edit", legacy, `{"planner_rank":3}`, ""},
		{"legacy, still no description", legacy, `{"content":"[\"$1\",\"$2\"]"}`, ""},
		{"legacy, fixes description", legacy, `{"content":"# WHAT: now documented"}`, ""},
		{"legacy sensitive, drops schema", legacySensitive, `{"input_schema":null}`, contract.CodeHighRiskMissingSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := contract.Patch(tt.old, mustDecode(t, tt.body), now)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var re *contract.RefusalError
			if !errors.As(err, &re) || re.Code != tt.want {
				t.Fatalf("err = %v, want refusal %s", err, tt.want)
			}
		})
	}
}

func TestPatchValidates(t *testing.T) {
	old := sampleRow(t, "ZZ_TEST_TEMPERATURE")
	_, _, err := contract.Patch(old, mustDecode(t, `{"target":"FETCH x","examples":"[1]"}`), now)
	var ve *contract.ValidationError
	if !errors.As(err, &ve) || ve.Field != "target" || !strings.Contains(err.Error(), "examples:") {
		t.Fatalf("err = %v", err)
	}
}
