package contract

import (
	"strings"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/contract/failure"
)

// troubleshooting picks the four failures a caller of r is most likely to meet, by
// the runner that executes it and its credential: the failure table at the point of
// use. The first is always the unknown key. The runner's literals come from its
// failure table (DocContext.Failures), as the runner writes them, with <…> for the
// variable parts; the document adds what no literal says (an empty slot, a
// variable that is not set, the breaker).
func troubleshooting(r *Row, auth DocAuth, u docURLs, args string, ctx DocContext) []DocProblem {
	unknown := DocProblem{
		Symptom: `{"error":"unknown_key",…,"did_you_mean":[…]}`,
		Cause:   "the key is not in the directory, or not in your scope (keys are case-sensitive)",
		Action:  "use a did_you_mean entry, or pick a key from the registry",
		URL:     "GET " + u.registry(),
	}
	shape := "GET " + u.run(args, true)
	listed := func(d failure.Doc) []DocProblem { return problems(ctx.Failures.Listed(d), u, shape) }
	runner := r.EffectiveRunner()
	var rest []DocProblem
	switch {
	case runner == TypeFlow:
		rest = append(listed(failure.DocEvery), flowTrouble(u)...)
	case auth.Form != "":
		rest = credentialTrouble(r.Key, auth, u, shape, ctx, listed)
	case runner == TypeHTTP || runner == TypeAgent:
		rest = append(listed(failure.DocEvery|failure.DocPlain), emptySlot(shape))
	default:
		rest = listed(failure.DocEvery | failure.DocPlain)
	}
	return append([]DocProblem{unknown}, rest...)
}

// problems are entries as a document lists them, each pointed at where its fix
// is made.
func problems(t failure.Table, u docURLs, shape string) []DocProblem {
	out := make([]DocProblem, len(t))
	for i, e := range t {
		out[i] = DocProblem{Symptom: e.Literal, Cause: e.Cause, Action: e.Fix, URL: faultURL(e.Fault, u, shape)}
	}
	return out
}

// faultURL is where a fix of fault is made.
func faultURL(f failure.Fault, u docURLs, shape string) string {
	switch f {
	case failure.FaultCall:
		return shape
	case failure.FaultRow:
		return "PATCH " + u.repair()
	case failure.FaultBreaker:
		return "GET " + u.base + "/api/breaker/" + u.key
	}
	return "GET " + u.ledger()
}

// flowTrouble is what a flow's caller meets besides its parse literals.
func flowTrouble(u docURLs) []DocProblem {
	return []DocProblem{
		{"a step's ERR:… is the flow's result", "a flow stops at the first step whose result begins ERR:", "read that step's receipt, then that row's own document", "GET " + u.ledger()},
		{`{"error":"payload_too_large: …"}`, "the body is over the payload ceiling", "send less, or pass large data by reference", "POST " + u.dispatch()},
	}
}

// emptySlot is what a template runner's caller meets when it sends too few arguments.
func emptySlot(shape string) DocProblem {
	return DocProblem{"an empty slot, e.g. &b=&", "fewer |-separated arguments than $N slots", "count the $N slots", shape}
}

// credentialTrouble is for a row whose upstream needs the credential it names: the
// variable unset (or the auth column refused), the credential refused, the breaker.
func credentialTrouble(key string, auth DocAuth, u docURLs, shape string, ctx DocContext, listed func(failure.Doc) []DocProblem) []DocProblem {
	names := strings.Join(auth.Variables, ", ")
	first := []DocProblem{{`"headers":{}` + " in the shape-mode answer", "the variable is not set where capdir runs", "add the secret under the exact name " + names + "; the row does not change", shape}}
	if auth.Form == authMalformed {
		first = problems(ctx.Failures.Listed(failure.DocMalformedAuth), u, shape)
		for i := range first {
			first[i].Symptom = failure.Entry{Literal: first[i].Symptom}.Fill(key)
		}
	}
	b := breaker.Failure
	breakerOpen := DocProblem{orDefault(ctx.BreakerOpen, breaker.Message(key, 0)), b.Cause, b.Fix, faultURL(b.Fault, u, shape)}
	return append(append(first, listed(failure.DocEvery|failure.DocCredential)...), breakerOpen)
}
