package gate

import (
	"slices"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog/wire"
)

// rowChecks are the checks of a token against a row alone, whatever the call:
// its scope (the key or the row's category), its contract pin and its risk
// ceiling. Permits runs them, the very functions Check runs, in Check's order.
var rowChecks = []check{inScope, contractPin, riskCeiling}

// Permits reports whether a caller holding claims could invoke row as far as the
// row decides, as Check would judge it: what a composing runner may offer that
// caller (an agent's tools and includes). nil claims are the owner's (or a gate
// without token checks): every row is permitted. Whether the row is enabled,
// its breaker, and the body's limits are the call's business, not the offer's.
func Permits(claims *token.Claims, row *contract.Row) bool {
	if claims == nil {
		return true
	}
	fingerprint := ""
	if claims.Pin != "" {
		fingerprint = contract.Fingerprint(row)
	}
	in := Input{Req: &wire.InvocationRequest{Key: row.Key}, Row: row, Fingerprint: fingerprint}
	a := Admission{Row: row, Fingerprint: fingerprint, Token: claims}
	for _, c := range rowChecks {
		if c(nil, &in, &a) != nil {
			return false
		}
	}
	return true
}

// Viewer is what a caller holding claims may see and call, as the documents, the
// registry, ask and an MCP session apply it (contract.Viewer): the token's scope
// and risk ceiling. nil claims are the owner's.
func Viewer(claims *token.Claims) contract.Viewer {
	if claims == nil {
		return contract.Owner()
	}
	return contract.Viewer{
		Role: contract.RoleToken, Risk: claims.Risk,
		Keys: slices.Clone(claims.Scope.Keys), Categories: slices.Clone(claims.Scope.Categories),
	}
}
