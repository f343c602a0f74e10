package gate

// check is one step of the gate: it refuses the request, or returns nil to pass
// it on, recording what later checks and the receipt need in a.
type check func(g *Gate, in *Input, a *Admission) *Refusal

// checks is the gate, in order. Each refusal's literal reason is in errors.go,
// token_errors.go, input_errors.go, or (token:…) the token package's errors.go. The token checks
// (token_checks.go) pass the owner's requests; a token holder meets its scope
// before anything that depends on which rows exist, so it cannot learn of a row
// outside its scope. Caller runs the first four (who the caller is); Access the
// first eleven, to tokenPayload (who may have this row's answer at all), for a
// receipt answered without a run (a request sent again).
var checks = []check{
	credential,      // token:required · token:malformed · token:bad_signature · token:expired · …
	notRevoked,      // token:revoked
	audience,        // token:audience:<got>
	notOwnerSubject, // token:owner_subject
	inScope,         // scope:<KEY>
	payloadCeiling,  // ERR:payload_too_large:<size>><ceiling>
	rowExists,       // {"error":"unknown_key",…,"did_you_mean":[…]} (for a token, only keys in its scope)
	contractPin,     // contract_changed:<pinned>!=<current>
	riskCeiling,     // risk_ceiling:low<row:high
	fixedBody,       // body_fixed:<fixed>!=<sent>
	tokenPayload,    // payload_ceiling:<size>><max>
	rowEnabled,      // ERR:disabled:<KEY>
	inputSchema,     // ERR:input:<what is wrong> (input_check.go) — the arguments against the row's input_schema
	breakerClosed,   // ERR:breaker_open:<KEY> — 8 consecutive auth failures; …
	watcher,         // approval_pending (no receipt yet) · approval_denied · approval_expired · approval_required:<KEY> (a step): keep it last
}

// payloadCeiling refuses a body over the ceiling. The entry points refuse one
// before appending it; this holds for a bus client's request too.
func payloadCeiling(g *Gate, in *Input, _ *Admission) *Refusal {
	if n := sentLen(in.Req); n > g.cfg.MaxPayload {
		return refusePayload(n, g.cfg.MaxPayload)
	}
	return nil
}

// rowExists refuses a key no row has, with suggestions, and records the row.
func rowExists(g *Gate, in *Input, a *Admission) *Refusal {
	if in.NotFound {
		return refuseUnknownKey(in.Req.Key, suggestWithin(a.Token, g.cfg.Suggest(in.Req.Key)))
	}
	if in.RowErr != nil {
		return refuseDirectory(in.RowErr)
	}
	a.Row, a.Fingerprint = in.Row, in.Fingerprint
	return nil
}

// rowEnabled refuses a row with enabled = 0.
func rowEnabled(_ *Gate, in *Input, a *Admission) *Refusal {
	if a.Row.Enabled == 0 {
		return refuseDisabled(a.Row.Key)
	}
	return nil
}

// breakerClosed refuses a row whose auth breaker is open, and records the
// generation the call runs under.
func breakerClosed(g *Gate, in *Input, a *Admission) *Refusal {
	if !CanStrike(a.Row) {
		return nil
	}
	if in.BreakerErr != nil {
		return refuseBreakerUnreadable(in.BreakerErr)
	}
	d := g.Decide(in.Breaker, a.Row.Auth, a.breakerCaller(in))
	a.BreakerGeneration = d.Generation
	if d.Open {
		return refuseBreakerOpen(a.Row.Key, g.cfg.Breaker.Threshold, d)
	}
	return nil
}
