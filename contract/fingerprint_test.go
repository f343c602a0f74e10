package contract_test

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"testing"

	"github.com/capdir/capdir/contract"
)

// goldenTemperature is the fingerprint of the sample ZZ_TEST_TEMPERATURE row. It
// changes only if the canonical encoding changes, which must bump its version.
const goldenTemperature = "fd333f4a84db4505ef660c997b39b53110288cb30d90c16dcd67c0187a0cd748"

// canonicalTemperature is the encoding Fingerprint documents, written out by hand.
const canonicalTemperature = `{"v":"capdir.contract.v1","key":"ZZ_TEST_TEMPERATURE","type":"http","runner":"http",` +
	`"category":"tools","target":"GET https://api.open-meteo.com/v1/forecast?latitude=$1&longitude=$2&current=temperature_2m",` +
	`"description":"Current temperature in Celsius for one latitude and longitude, from the Open-Meteo public API.",` +
	`"input_schema":"","auth":"","risk":"low","status":"enabled","includes":"","payload":""}`

func TestFingerprintGolden(t *testing.T) {
	r := sampleRow(t, "ZZ_TEST_TEMPERATURE")
	got := contract.Fingerprint(&r)
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(got) {
		t.Fatalf("Fingerprint = %q, want 64 lowercase hex digits", got)
	}
	sum := sha256.Sum256([]byte(canonicalTemperature))
	if hex.EncodeToString(sum[:]) != goldenTemperature {
		t.Fatal("golden hash does not match the documented canonical encoding")
	}
	if got != goldenTemperature {
		t.Fatalf("Fingerprint = %s, want %s", got, goldenTemperature)
	}
}

func TestFingerprintTracksTheCallableContract(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(r *contract.Row)
		changes bool
	}{
		// Documentation-only edits: the sample examples PATCH kept the hash.
		{"examples", func(r *contract.Row) { r.Examples = `["51.51|-0.13"]` }, false},
		{"seq", func(r *contract.Row) { r.Seq = ptr(1) }, false},
		{"planner_visible", func(r *contract.Row) { r.PlannerVisible = 0 }, false},
		{"planner_rank", func(r *contract.Row) { r.PlannerRank = 1 }, false},
		{"allowed_categories", func(r *contract.Row) { r.AllowedCategories = "*" }, false},
		{"timestamps", func(r *contract.Row) { r.UpdatedAt, r.CreatedAt = "x", "y" }, false},
		{"row_num", func(r *contract.Row) { r.RowNum = 412 }, false},
		{"EX line", func(r *contract.Row) { r.Content += "\n# EX: [ZZ_TEST_TEMPERATURE]51.51|-0.13[/ZZ_TEST_TEMPERATURE]" }, false},
		{"extra comment", func(r *contract.Row) { r.Content = "# note: free public API\n" + r.Content }, false},
		{"runner equal to type", func(r *contract.Row) { r.Runner = "http" }, false},
		{"schema formatting", func(r *contract.Row) {}, false}, // see TestFingerprintCanonicalSchema
		// Contract edits: the sample target PATCH changed the hash.
		{"target", func(r *contract.Row) { r.Target += ",wind_speed_10m" }, true},
		{"key", func(r *contract.Row) { r.Key = "ZZ_TEST_TEMPERATURE_2" }, true},
		{"type", func(r *contract.Row) { r.Type = "fn" }, true},
		{"runner", func(r *contract.Row) { r.Runner = "nats" }, true},
		{"category", func(r *contract.Row) { r.Category = "weather" }, true},
		{"description", func(r *contract.Row) { r.Content = "# WHAT: Temperature in Kelvin.\n" + r.Content }, true},
		{"input_schema", func(r *contract.Row) { r.InputSchema = `{"type":"object"}` }, true},
		{"auth", func(r *contract.Row) { r.Auth = "query:key=METEO_KEY" }, true},
		{"sensitive", func(r *contract.Row) { r.Sensitive = 1 }, true},
		{"enabled", func(r *contract.Row) { r.Enabled = 0 }, true},
		{"includes", func(r *contract.Row) { r.Includes = "BLOCK_VOICE" }, true},
		{"payload", func(r *contract.Row) { r.Content += "\n{\"q\":\"$1\"}" }, true},
	}
	base := sampleRow(t, "ZZ_TEST_TEMPERATURE")
	want := contract.Fingerprint(&base)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sampleRow(t, "ZZ_TEST_TEMPERATURE")
			tt.edit(&r)
			got := contract.Fingerprint(&r)
			if changed := got != want; changed != tt.changes {
				t.Fatalf("fingerprint changed = %v, want %v", changed, tt.changes)
			}
		})
	}
}

func TestFingerprintCanonicalSchema(t *testing.T) {
	a := contract.Row{Key: "K", Type: "fn", InputSchema: `{"type":"object","required":["a"],"properties":{"a":{"type":"number","maximum":1.50}}}`}
	b := a
	b.InputSchema = "{\n  \"properties\": {\"a\": {\"maximum\": 1.50, \"type\": \"number\"}},\n  \"required\": [\"a\"],\n  \"type\": \"object\"\n}\n"
	if contract.Fingerprint(&a) != contract.Fingerprint(&b) {
		t.Error("whitespace and key order changed the fingerprint")
	}
	c := a
	c.InputSchema = `{"type":"object","required":["b"],"properties":{"a":{"type":"number","maximum":1.50}}}`
	if contract.Fingerprint(&a) == contract.Fingerprint(&c) {
		t.Error("a schema edit left the fingerprint unchanged")
	}
	// Text after the schema's object is not insignificant: "{…}}" is not "{…}".
	for _, tail := range []string{"}", "]", " {}", "x"} {
		d := a
		d.InputSchema = a.InputSchema + tail
		if contract.Fingerprint(&a) == contract.Fingerprint(&d) {
			t.Errorf("input_schema %q has the fingerprint of the schema without %q", d.InputSchema, tail)
		}
	}
}

func TestFingerprintSamplePatches(t *testing.T) {
	// The sample three invocations: baseline, after an examples PATCH, after a target PATCH.
	base := sampleRow(t, "ZZ_TEST_TEMPERATURE")
	afterExamples, _, err := contract.Patch(base, mustDecode(t, `{"examples":"[\"51.51|-0.13\"]"}`), now)
	if err != nil {
		t.Fatal(err)
	}
	afterTarget, _, err := contract.Patch(afterExamples, mustDecode(t,
		`{"target":"GET https://api.open-meteo.com/v1/forecast?latitude=$1&longitude=$2&current=temperature_2m,wind_speed_10m"}`), now)
	if err != nil {
		t.Fatal(err)
	}
	f0, f1, f2 := contract.Fingerprint(&base), contract.Fingerprint(&afterExamples), contract.Fingerprint(&afterTarget)
	if f0 != f1 {
		t.Errorf("examples edit changed the fingerprint: %s -> %s", f0, f1)
	}
	if f1 == f2 {
		t.Errorf("target edit left the fingerprint at %s", f1)
	}
}

func BenchmarkFingerprint(b *testing.B) {
	r := sampleRow(b, "ZZ_TEST_TEMPERATURE")
	r.InputSchema = `{"type":"object","properties":{"lat":{"type":"number"},"lon":{"type":"number"}}}`
	b.ReportAllocs()
	for b.Loop() {
		contract.Fingerprint(&r)
	}
}
