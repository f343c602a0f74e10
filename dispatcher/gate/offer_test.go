package gate_test

import (
	"testing"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/gate"
	"github.com/capdir/capdir/dispatcher/gate/token"
)

// Permits judges a row as Check would for the same token: scope by key or
// category, contract pin, risk ceiling; the owner (no claims) may invoke any row.
func TestPermitsFollowsTheTokenChecks(t *testing.T) {
	plain := &contract.Row{Key: "PLAIN", Type: "fn", Category: "tools", Content: "# WHAT: plain", Enabled: 1}
	other := &contract.Row{Key: "OTHER", Type: "fn", Category: "misc", Content: "# WHAT: other", Enabled: 1}
	sensitive := &contract.Row{Key: "SENSITIVE", Type: "fn", Category: "tools", Content: "# WHAT: sensitive", Sensitive: 1, InputSchema: `{"type":"object"}`, Enabled: 1}
	byCategory := &token.Claims{Risk: token.RiskLow, Scope: token.Scope{Categories: []string{"tools"}}}
	byKey := &token.Claims{Risk: token.RiskHigh, Scope: token.Scope{Keys: []string{"OTHER", "SENSITIVE"}}}
	pinned := &token.Claims{Risk: token.RiskLow, Scope: token.Scope{Keys: []string{"PLAIN", "OTHER"}}, Pin: contract.Fingerprint(plain)}
	for _, tc := range []struct {
		name   string
		claims *token.Claims
		row    *contract.Row
		want   bool
	}{
		{"owner", nil, sensitive, true},
		{"category in scope", byCategory, plain, true},
		{"category out of scope", byCategory, other, false},
		{"sensitive over a low ceiling", byCategory, sensitive, false},
		{"key in scope", byKey, other, true},
		{"sensitive under a high ceiling", byKey, sensitive, true},
		{"key out of scope", byKey, plain, false},
		{"pinned contract", pinned, plain, true},
		{"another contract than the pin", pinned, other, false},
	} {
		if got := gate.Permits(tc.claims, tc.row); got != tc.want {
			t.Errorf("%s: Permits = %v, want %v", tc.name, got, tc.want)
		}
	}
}
