package contract

import "strings"

// troubleshooting picks the four failures a caller of r is most likely to meet, by
// the runner that executes it and its credential: the failure table at the point of
// use. The first is always the unknown key. Literals are quoted as the runners
// write them, with <…> for the variable parts.
func troubleshooting(r *Row, auth DocAuth, u docURLs, args, breakerOpen string) []DocProblem {
	unknown := DocProblem{
		Symptom: `{"error":"unknown_key",…,"did_you_mean":[…]}`,
		Cause:   "the key is not in the directory, or not in your scope (keys are case-sensitive)",
		Action:  "use a did_you_mean entry, or pick a key from the registry",
		URL:     "GET " + u.registry(),
	}
	shape := "GET " + u.run(args, true)
	runner := r.EffectiveRunner()
	var rest []DocProblem
	switch {
	case runner == TypeFn:
		rest = fnTrouble(u, shape)
	case runner == TypeFlow:
		rest = flowTrouble(u)
	case runner == "nats":
		rest = natsTrouble(u)
	case auth.Form != "":
		rest = credentialTrouble(r.Key, runner, auth, u, shape, breakerOpen)
	default:
		rest = upstreamTrouble(runner, u, shape)
	}
	return append([]DocProblem{unknown}, rest...)
}

func fnTrouble(u docURLs, shape string) []DocProblem {
	return []DocProblem{
		{"ERR:fn:unknown_target:<name>", "target names no function registered on this node", "correct the target; a function renamed in a deploy needs its new name", "PATCH " + u.repair()},
		{"ERR:fn:bad_content_json:<message>", "the template is not valid JSON once the arguments are in", "look for an unescaped quote in an argument; see the call in shape mode", shape},
		{"ERR:fn:content_not_array", "the template is valid JSON but not an array", `wrap it: ["$1","$2"]`, "PATCH " + u.repair()},
	}
}

func flowTrouble(u docURLs) []DocProblem {
	return []DocProblem{
		{"ERR:flow:bad_step:<text>", "a step has no ':' between its key and its arguments", "write each step as KEY: args", "PATCH " + u.repair()},
		{"a step's ERR:… is the flow's result", "a flow stops at the first step whose result begins ERR:", "read that step's receipt, then that row's own document", "GET " + u.ledger()},
		{`{"error":"payload_too_large: …"}`, "the body is over the payload ceiling", "send less, or pass large data by reference", "POST " + u.dispatch()},
	}
}

func natsTrouble(u docURLs) []DocProblem {
	return []DocProblem{
		{"ERR:nats:no_responders:<subject>", "no service answers on the row's subject", "start the service that serves this subject", "GET " + u.ledger()},
		{"ERR:nats:timeout:<subject>", "the service did not answer in time", "check the service's health, then call again", "GET " + u.ledger()},
		{"ERR:nats:reserved_subject:<subject>", "the target is a subject of NATS or of capdir", "the owner sets a subject of its own", "PATCH " + u.repair()},
	}
}

// credentialTrouble is for a row whose upstream needs the credential it names.
func credentialTrouble(key, runner string, auth DocAuth, u docURLs, shape, breakerOpen string) []DocProblem {
	names := strings.Join(auth.Variables, ", ")
	missing := DocProblem{`"headers":{}` + " in the shape-mode answer", "the variable is not set where capdir runs", "add the secret under the exact name " + names + "; the row does not change", shape}
	if auth.Form == authMalformed {
		missing = DocProblem{"ERR:" + runner + ":" + key + ":ERR:auth:…", "auth is not bearer:, basic:, headers:, query: or oauth: with a variable name", "the owner writes a supported form", "PATCH " + u.repair()}
	}
	return []DocProblem{
		missing,
		{"ERR:" + runner + ":401:<body>", "the credential is set but the upstream refuses it", "rotate the secret; the row is fine", "GET " + u.ledger()},
		{breakerOpen, "the upstream's 401/403 answers opened the breaker", "replace the credential: a new value closes it", "GET " + u.base + "/api/breaker/" + u.key},
	}
}

// upstreamTrouble is for a row that calls an upstream without a credential.
func upstreamTrouble(runner string, u docURLs, shape string) []DocProblem {
	return []DocProblem{
		{"ERR:" + runner + ":fetch:<message>", "DNS, TLS or connection failure", "check the URL in target", "PATCH " + u.repair()},
		{"ERR:" + runner + ":<status>:<body>", "the upstream refused the call", "check the arguments against ARGS in shape mode", shape},
		{"an empty slot, e.g. &b=&", "fewer |-separated arguments than $N slots", "count the $N slots", shape},
	}
}
