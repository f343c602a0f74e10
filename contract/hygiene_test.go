package contract_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/capdir/capdir/contract"
)

func TestHygiene(t *testing.T) {
	const schema = `{"type":"object"}`
	tests := []struct {
		name string
		row  contract.Row
		want string // "" means compliant
	}{
		{"what line", contract.Row{Type: "http", Content: "# WHAT: does a thing"}, ""},
		{"untagged comment", contract.Row{Type: "fn", Content: "# Return the time.\n[\"$1\"]"}, ""},
		{"tagged comment only", contract.Row{Type: "http", Content: "# ARGS: key | json_body\n$2+"}, ""},
		{"empty content", contract.Row{Type: "fn"}, contract.CodeMissingDescription},
		{"payload only", contract.Row{Type: "fn", Content: `["$1"]`}, contract.CodeMissingDescription},
		{"empty comments", contract.Row{Type: "flow", Content: "#\n#   \nA: $1"}, contract.CodeMissingDescription},
		{"agent prompt", contract.Row{Type: "agent", Content: "\n  You are terse.\nAnswer."}, ""},
		{"agent blank", contract.Row{Type: "agent", Content: " \n\t\n"}, contract.CodeMissingDescription},
		{"sensitive with schema", contract.Row{Type: "fn", Content: "# WHAT: x", Sensitive: 1, InputSchema: schema}, ""},
		{"sensitive without schema", contract.Row{Type: "fn", Content: "# WHAT: x", Sensitive: 1}, contract.CodeHighRiskMissingSchema},
		{"sensitive blank schema", contract.Row{Type: "fn", Content: "# WHAT: x", Sensitive: 1, InputSchema: "  "}, contract.CodeHighRiskMissingSchema},
		{"both: description first", contract.Row{Type: "fn", Sensitive: 1}, contract.CodeMissingDescription},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := contract.Hygiene(&tt.row)
			switch {
			case tt.want == "" && got != nil:
				t.Fatalf("refused %v, want compliant", got)
			case tt.want != "" && got == nil:
				t.Fatalf("compliant, want %s", tt.want)
			case tt.want != "" && got.Code != tt.want:
				t.Fatalf("code %s, want %s", got.Code, tt.want)
			}
		})
	}
}

func TestRefusalBody(t *testing.T) {
	for _, code := range []string{contract.CodeMissingDescription, contract.CodeHighRiskMissingSchema} {
		t.Run(code, func(t *testing.T) {
			r := contract.Row{Type: "fn", Sensitive: 1}
			if code == contract.CodeHighRiskMissingSchema {
				r.Content = "# WHAT: x"
			}
			e := contract.Hygiene(&r)
			if e.Error() != "registry_hygiene_refused: "+code {
				t.Errorf("Error() = %q", e.Error())
			}
			if !errors.Is(e, contract.ErrHygieneRefused) {
				t.Error("not ErrHygieneRefused")
			}
			body := string(e.Body())
			prefix := `{"error":"registry_hygiene_refused: ` + code + `","how_to_fix":"`
			if !strings.HasPrefix(body, prefix) || !strings.HasSuffix(body, `","state_changed":false}`) {
				t.Errorf("Body() = %s", body)
			}
			var parsed struct {
				Error        string `json:"error"`
				HowToFix     string `json:"how_to_fix"`
				StateChanged *bool  `json:"state_changed"`
			}
			if err := json.Unmarshal(e.Body(), &parsed); err != nil {
				t.Fatal(err)
			}
			if parsed.HowToFix != e.HowToFix || parsed.StateChanged == nil || *parsed.StateChanged {
				t.Errorf("parsed body = %+v", parsed)
			}
			m, err := json.Marshal(e)
			if err != nil || string(m) != body {
				t.Errorf("json.Marshal = %s, %v; want Body()", m, err)
			}
		})
	}
}

func TestRefusalHowToFix(t *testing.T) {
	md := contract.Hygiene(&contract.Row{Type: "fn"})
	for _, w := range []string{"# WHAT:", "# ARGS:", "# EX:"} {
		if !strings.Contains(md.HowToFix, w) {
			t.Errorf("missing_description how_to_fix lacks %q", w)
		}
	}
	if !strings.HasPrefix(md.HowToFix, "content (the docstring") {
		t.Errorf("how_to_fix = %q", md.HowToFix)
	}
	hr := contract.Hygiene(&contract.Row{Type: "fn", Content: "# WHAT: x", Sensitive: 1})
	if !strings.Contains(hr.HowToFix, "input_schema") || !strings.Contains(hr.HowToFix, "sensitive") {
		t.Errorf("high_risk_missing_schema how_to_fix = %q", hr.HowToFix)
	}
}
