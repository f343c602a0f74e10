package gate_test

import (
	"cmp"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/gate"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog/wire"
)

// The gate's checks, their literal refusals and their order (check.go), each
// pinned by a case. A case that fails two checks expects the first one's refusal,
// so swapping any two checks fails at least one case.

const (
	ceiling  = 8 // the gate's payload ceiling in these tests, in bytes
	tagSalt  = "gate-test-salt"
	credEnv  = "API_TOKEN"
	oldToken = "token-before"
	newToken = "token-after"
	cooldown = time.Hour
)

// openedAt is when every open breaker of these tests tripped; the fake clock reads
// openedAt plus a case's after.
var openedAt = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// fakeClock is the gate's clock, moved by hand.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

// suggestions is the gate's Suggest func; it records the keys it was asked for.
type suggestions struct{ asked []string }

func (s *suggestions) suggest(key string) []string {
	s.asked = append(s.asked, key)
	if key == "GRET" {
		return []string{"GREET", "GREEN"}
	}
	return nil
}

func fnRow() *contract.Row {
	return &contract.Row{Key: "GREET", Type: contract.TypeFn, Target: "echo", Enabled: 1}
}

// busRow is an fn-typed row the runner column sends to the nats runner: it cannot
// strike either.
func busRow() *contract.Row {
	return &contract.Row{Key: "BUS", Type: contract.TypeFn, Runner: runner.RunnerNATS, Target: "svc.greet", Enabled: 1}
}

func httpRow() *contract.Row {
	return &contract.Row{Key: "API", Type: contract.TypeHTTP, Target: "GET http://127.0.0.1:1/x", Auth: "bearer:" + credEnv, Enabled: 1}
}

// pointSchema requires a number x ($1) and takes a number y ($2).
const pointSchema = `{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x"]}`

// pointRow is an fn row with an input_schema: it cannot strike.
func pointRow() *contract.Row {
	return &contract.Row{Key: "PT", Type: contract.TypeFn, Target: "echo", Enabled: 1, Content: "# WHAT: a point\n# ARGS: $1=x | $2=y", InputSchema: pointSchema}
}

// pointAPI is an http row with the same input_schema: it can strike.
func pointAPI() *contract.Row {
	r := httpRow()
	r.Content, r.InputSchema = "# WHAT: a point\n# ARGS: $1=x | $2=y", pointSchema
	return r
}

func withSchema(r *contract.Row, schema string) *contract.Row { r.InputSchema = schema; return r }

// signatureOf compiles a signature as the projector would, for Input.Signature.
func signatureOf(r *contract.Row) *contract.Signature {
	s, err := contract.CompileSignature(r)
	if err != nil {
		panic(err)
	}
	return s
}

func disabled(r *contract.Row) *contract.Row { r.Enabled = 0; return r }

// oldTag is the credential tag of oldToken, the one the open breaker remembers.
var oldTag = runner.CredentialTag("bearer:"+credEnv, runner.MapEnv(map[string]string{credEnv: oldToken}), tagSalt)

// openBreaker is an open breaker of key, tripped at openedAt under oldToken.
func openBreaker(key string) breaker.State {
	return breaker.State{Key: key, Strikes: 8, Open: true, OpenedAt: openedAt, CredTag: oldTag, Generation: 3}
}

// closedBreaker is a closed breaker of key at generation 5.
func closedBreaker(key string) breaker.State { return breaker.State{Key: key, Generation: 5} }

var (
	errRead    = errors.New("projector: read GREET: disk on fire")
	errBreaker = errors.New("projector: read breaker API: disk on fire")
	errMissing = errors.New("projector: not found")
)

// breakerOpenMessage is breaker.Message("API", 8), spelled out so a change to the
// literal fails here.
const breakerOpenMessage = "ERR:breaker_open:API \u2014 8 consecutive auth failures; credential is dead until replaced."

type gateCase struct {
	name string
	key  string // the request's key
	body string
	args string     // the request's arguments object, "" for none
	runs string     // the body the runner gets when admitted; "" means body
	in   gate.Input // Req is filled from key, body and args
	env  string     // the value of API_TOKEN now ("" when unset)
	// after is how long after openedAt the request is checked (fake clock).
	after time.Duration

	status  string // "" when admitted
	reason  string
	extra   map[string]any
	gen     uint64   // the admission's breaker generation
	noRow   bool     // the admission carries no row (refused before rowExists recorded it)
	suggest []string // the keys Suggest must have been asked for
}

func gateCases() []gateCase {
	oversized := strings.Repeat("x", ceiling+1)
	fits := strings.Repeat("x", ceiling)
	unknownGRET := map[string]any{"error": "unknown_key", "attempted": "GRET", "ran": false, "did_you_mean": []string{"GREET", "GREEN"}}
	breakerExtra := map[string]any{"opened_at": openedAt, "closes_at": openedAt.Add(cooldown)}
	return []gateCase{
		// 1. payloadCeiling
		{name: "payload at the ceiling is admitted", key: "GREET", body: fits, in: gate.Input{Row: fnRow()}},
		{
			name: "payload over the ceiling", key: "GREET", body: oversized, in: gate.Input{Row: fnRow()},
			status: wire.StatusRefusedPayloadTooLarge, reason: "ERR:payload_too_large:9>8", noRow: true,
		},
		// 2. rowExists
		{
			name: "unknown key gets did_you_mean", key: "GRET", body: "Ada", in: gate.Input{NotFound: true, RowErr: errMissing},
			status: wire.StatusRefusedUnknownKey, noRow: true, suggest: []string{"GRET"},
			reason: `{"attempted":"GRET","did_you_mean":["GREET","GREEN"],"error":"unknown_key","ran":false}`,
			extra:  unknownGRET,
		},
		{
			name: "unknown key with no suggestion gets an empty did_you_mean", key: "ZZZ", in: gate.Input{NotFound: true, RowErr: errMissing},
			status: wire.StatusRefusedUnknownKey, noRow: true, suggest: []string{"ZZZ"},
			reason: `{"attempted":"ZZZ","did_you_mean":[],"error":"unknown_key","ran":false}`,
			extra:  map[string]any{"error": "unknown_key", "attempted": "ZZZ", "ran": false, "did_you_mean": []string{}},
		},
		{
			name: "row read error", key: "GREET", body: "Ada", in: gate.Input{RowErr: errRead},
			status: wire.StatusFailedBeforeRun, reason: "ERR:directory:projector: read GREET: disk on fire", noRow: true,
		},
		// 3. rowEnabled
		{
			name: "disabled row", key: "GREET", body: "Ada", in: gate.Input{Row: disabled(fnRow())},
			status: wire.StatusRefusedDisabled, reason: "ERR:disabled:GREET",
		},
		// 4. inputSchema
		{name: "input: numbers", key: "PT", body: "1|2", in: gate.Input{Row: pointRow()}},
		{name: "input: the optional one absent", key: "PT", body: "1", in: gate.Input{Row: pointRow()}},
		{
			name: "input: not a number", key: "PT", body: "a|2", in: gate.Input{Row: pointRow()},
			status: wire.StatusRefusedInput, reason: `ERR:input:x: must be number, got string "a"`,
		},
		{
			name: "input: required one absent", key: "PT", body: "|2", in: gate.Input{Row: pointRow()},
			status: wire.StatusRefusedInput, reason: "ERR:input:x: is required",
		},
		{
			name: "input: one argument too many", key: "PT", body: "1|2|3", in: gate.Input{Row: pointRow()},
			status: wire.StatusRefusedInput, reason: `ERR:input:takes at most 2 arguments (x | y), got 3; a "|" inside an argument splits it in two`,
		},
		{name: "input: an object runs as its pipe form", key: "PT", args: `{"x":1}`, runs: "1", in: gate.Input{Row: pointRow()}},
		{name: "input: a null object is none", key: "PT", body: "1", args: `null`, in: gate.Input{Row: pointRow()}},
		{
			name: "input: an object that fails", key: "PT", args: `{"x":[]}`, in: gate.Input{Row: pointRow()},
			status: wire.StatusRefusedInput, reason: "ERR:input:x: must be number, got array",
		},
		{
			name: "input: an object and a body", key: "PT", body: "1", args: `{"x":1}`, in: gate.Input{Row: pointRow()},
			status: wire.StatusRefusedInput, reason: "ERR:input:send the arguments either as the body string or as one object of named arguments, not both",
		},
		{
			name: "input: an object to a row without input_schema", key: "GREET", args: `{"a":1}`, in: gate.Input{Row: fnRow()},
			status: wire.StatusRefusedInput,
			reason: `ERR:input:"body" must be a string of pipe-separated arguments, like "Ada|42" (this row has no input_schema, so its arguments have no names)`,
		},
		{name: "input: a row without input_schema takes any body", key: "GREET", body: "a|b|c|d", in: gate.Input{Row: fnRow()}},
		{
			name: "input: the given signature is the one checked", key: "PT", body: "a",
			in: gate.Input{Row: pointRow(), Signature: signatureOf(withSchema(pointRow(), `{"properties":{"x":{"type":"string"}}}`))},
		},
		{
			name: "input: a schema that does not compile", key: "PT", body: "1", in: gate.Input{Row: withSchema(pointRow(), `{"type":`)},
			status: wire.StatusFailedBeforeRun, reason: "ERR:input_schema: must be a JSON Schema as a JSON string; it is not valid JSON: unexpected EOF",
		},
		{
			name: "input: the given compile error", key: "PT", body: "1", in: gate.Input{Row: pointRow(), SignatureErr: errors.New("input_schema: gone bad")},
			status: wire.StatusFailedBeforeRun, reason: "ERR:input_schema: gone bad",
		},
		// 5. breakerClosed
		{
			name: "open breaker on an http row", key: "API", in: gate.Input{Row: httpRow(), Breaker: openBreaker("API")},
			env: oldToken, after: time.Minute,
			status: wire.StatusRefusedBreakerOpen, reason: breakerOpenMessage, extra: breakerExtra, gen: 3,
		},
		{
			name: "open breaker with no credential set stays open", key: "API", in: gate.Input{Row: httpRow(), Breaker: openBreaker("API")},
			after:  time.Minute,
			status: wire.StatusRefusedBreakerOpen, reason: breakerOpenMessage, extra: breakerExtra, gen: 3,
		},
		{
			name: "open breaker a nanosecond before the cooldown ends", key: "API", in: gate.Input{Row: httpRow(), Breaker: openBreaker("API")},
			env: oldToken, after: cooldown - time.Nanosecond,
			status: wire.StatusRefusedBreakerOpen, reason: breakerOpenMessage, extra: breakerExtra, gen: 3,
		},
		{
			name: "open breaker closed by the cooldown", key: "API", in: gate.Input{Row: httpRow(), Breaker: openBreaker("API")},
			env: oldToken, after: cooldown, gen: 4,
		},
		{
			name: "open breaker closed by a replaced credential", key: "API", in: gate.Input{Row: httpRow(), Breaker: openBreaker("API")},
			env: newToken, after: time.Minute, gen: 4,
		},
		{name: "closed breaker on an http row", key: "API", in: gate.Input{Row: httpRow(), Breaker: closedBreaker("API")}, env: oldToken, gen: 5},
		{name: "open breaker on an fn row is not read", key: "GREET", in: gate.Input{Row: fnRow(), Breaker: openBreaker("GREET")}, env: oldToken, after: time.Minute},
		{name: "open breaker on a nats-runner row is not read", key: "BUS", in: gate.Input{Row: busRow(), Breaker: openBreaker("BUS")}, env: oldToken, after: time.Minute},
		{name: "unreadable breaker on an fn row is not read", key: "GREET", in: gate.Input{Row: fnRow(), BreakerErr: errBreaker}},
		{
			name: "unreadable breaker on an http row", key: "API", in: gate.Input{Row: httpRow(), BreakerErr: errBreaker},
			status: wire.StatusFailedBeforeRun, reason: "ERR:breaker:projector: read breaker API: disk on fire",
		},
		// Two failures: the first check's refusal.
		{
			name: "oversized and unknown: payload first", key: "GRET", body: oversized, in: gate.Input{NotFound: true, RowErr: errMissing},
			status: wire.StatusRefusedPayloadTooLarge, reason: "ERR:payload_too_large:9>8", noRow: true,
		},
		{
			name: "oversized and unreadable row: payload first", key: "GREET", body: oversized, in: gate.Input{RowErr: errRead},
			status: wire.StatusRefusedPayloadTooLarge, reason: "ERR:payload_too_large:9>8", noRow: true,
		},
		{
			name: "oversized and disabled: payload first", key: "GREET", body: oversized, in: gate.Input{Row: disabled(fnRow())},
			status: wire.StatusRefusedPayloadTooLarge, reason: "ERR:payload_too_large:9>8", noRow: true,
		},
		{
			name: "oversized and breaker open: payload first", key: "API", body: oversized, in: gate.Input{Row: httpRow(), Breaker: openBreaker("API")},
			env: oldToken, after: time.Minute,
			status: wire.StatusRefusedPayloadTooLarge, reason: "ERR:payload_too_large:9>8", noRow: true,
		},
		{
			name: "disabled and breaker open: disabled first", key: "API", in: gate.Input{Row: disabled(httpRow()), Breaker: openBreaker("API")},
			env: oldToken, after: time.Minute,
			status: wire.StatusRefusedDisabled, reason: "ERR:disabled:API",
		},
		{
			name: "disabled and breaker unreadable: disabled first", key: "API", in: gate.Input{Row: disabled(httpRow()), BreakerErr: errBreaker},
			status: wire.StatusRefusedDisabled, reason: "ERR:disabled:API",
		},
		{
			name: "oversized object: payload first", key: "PT", args: `{"x":123}`, in: gate.Input{Row: pointRow()},
			status: wire.StatusRefusedPayloadTooLarge, reason: "ERR:payload_too_large:9>8", noRow: true,
		},
		{
			name: "body and object over the ceiling together: payload first", key: "PT", body: "12", args: `{"x":1}`, in: gate.Input{Row: pointRow()},
			status: wire.StatusRefusedPayloadTooLarge, reason: "ERR:payload_too_large:9>8", noRow: true,
		},
		{
			name: "unknown key and bad input: unknown first", key: "GRET", body: "a", in: gate.Input{NotFound: true, RowErr: errMissing},
			status: wire.StatusRefusedUnknownKey, noRow: true, suggest: []string{"GRET"},
			reason: `{"attempted":"GRET","did_you_mean":["GREET","GREEN"],"error":"unknown_key","ran":false}`,
			extra:  unknownGRET,
		},
		{
			name: "disabled and bad input: disabled first", key: "PT", body: "a", in: gate.Input{Row: disabled(pointRow())},
			status: wire.StatusRefusedDisabled, reason: "ERR:disabled:PT",
		},
		{
			name: "bad input and breaker open: input first", key: "API", body: "a", in: gate.Input{Row: pointAPI(), Breaker: openBreaker("API")},
			env: oldToken, after: time.Minute,
			status: wire.StatusRefusedInput, reason: `ERR:input:x: must be number, got string "a"`,
		},
		{
			name: "bad input and breaker unreadable: input first", key: "API", body: "a", in: gate.Input{Row: pointAPI(), BreakerErr: errBreaker},
			status: wire.StatusRefusedInput, reason: `ERR:input:x: must be number, got string "a"`,
		},
		{
			name: "good input and breaker open: breaker", key: "API", body: "1", in: gate.Input{Row: pointAPI(), Breaker: openBreaker("API")},
			env: oldToken, after: time.Minute,
			status: wire.StatusRefusedBreakerOpen, reason: breakerOpenMessage, extra: breakerExtra, gen: 3,
		},
	}
}

func TestGateCheck(t *testing.T) {
	if newTag := runner.CredentialTag("bearer:"+credEnv, runner.MapEnv(map[string]string{credEnv: newToken}), tagSalt); newTag == oldTag || oldTag == "" {
		t.Fatalf("precondition: the two tokens' tags %q and %q must differ and be set", oldTag, newTag)
	}
	for _, tc := range gateCases() {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			if tc.env != "" {
				env[credEnv] = tc.env
			}
			clock := &fakeClock{now: openedAt.Add(tc.after)}
			var sug suggestions
			g, err := gate.New(gate.Config{
				MaxPayload: ceiling, Breaker: breaker.Config{Threshold: 8, Cooldown: cooldown},
				Env: runner.MapEnv(env), TagSalt: tagSalt, Suggest: sug.suggest, Clock: clock.Now,
				Tokens: testVerifier(t), Revoked: neverRevoked,
			})
			if err != nil {
				t.Fatal(err)
			}
			in := tc.in
			in.Owner = true // these checks hold for the owner; token_checks_test.go has the token holders'
			in.Req = &wire.InvocationRequest{InvocationID: "inv_test", Key: tc.key, Body: tc.body}
			if tc.args != "" {
				in.Req.Args = json.RawMessage(tc.args)
			}
			if in.Row != nil {
				in.Fingerprint = "fp-" + in.Row.Key
			}
			a, r := g.Check(&in)
			saw(r)

			switch {
			case tc.status == "" && r != nil:
				t.Fatalf("refused %s %q, want admitted", r.Status, r.Literal)
			case tc.status != "" && r == nil:
				t.Fatalf("admitted, want %s %q", tc.status, tc.reason)
			case r != nil:
				if r.Status != tc.status || r.Literal != tc.reason {
					t.Errorf("refusal:\n got %s %q\nwant %s %q", r.Status, r.Literal, tc.status, tc.reason)
				}
				if !reflect.DeepEqual(r.Extra, tc.extra) {
					t.Errorf("extra: got %#v, want %#v", r.Extra, tc.extra)
				}
			}
			if runs := cmp.Or(tc.runs, tc.body); r == nil && a.Body != runs {
				t.Errorf("the runner gets %q, want %q", a.Body, runs)
			}
			if tc.noRow {
				if a.Row != nil || a.Fingerprint != "" {
					t.Errorf("admission carries row %v (%q); the refusal came before the row was read", a.Row, a.Fingerprint)
				}
			} else if a.Row != in.Row || a.Fingerprint != in.Fingerprint {
				t.Errorf("admission row %p %q, want the input's %p %q", a.Row, a.Fingerprint, in.Row, in.Fingerprint)
			}
			if a.BreakerGeneration != tc.gen {
				t.Errorf("breaker generation %d, want %d", a.BreakerGeneration, tc.gen)
			}
			if !reflect.DeepEqual(sug.asked, tc.suggest) {
				t.Errorf("Suggest asked for %q, want %q", sug.asked, tc.suggest)
			}
		})
	}
}

// The open breaker's message is breaker.Message: the gate does not spell it itself.
func TestGateBreakerMessageIsBreakers(t *testing.T) {
	if got := breaker.Message("API", 8); got != breakerOpenMessage {
		t.Fatalf("breaker.Message = %q, want %q", got, breakerOpenMessage)
	}
}

// A replaced credential closes the breaker from the next check on, without
// waiting for the cooldown: the same gate, the environment changed under it.
func TestGateReplacedCredentialClosesBreaker(t *testing.T) {
	env := map[string]string{credEnv: oldToken}
	clock := &fakeClock{now: openedAt.Add(time.Minute)}
	g, err := gate.New(gate.Config{
		MaxPayload: ceiling, Breaker: breaker.Config{Threshold: 8, Cooldown: cooldown},
		Env: runner.MapEnv(env), TagSalt: tagSalt, Clock: clock.Now,
		Tokens: testVerifier(t), Revoked: neverRevoked,
	})
	if err != nil {
		t.Fatal(err)
	}
	in := &gate.Input{Req: &wire.InvocationRequest{Key: "API"}, Row: httpRow(), Breaker: openBreaker("API"), Owner: true}
	if _, r := g.Check(in); r == nil || r.Status != wire.StatusRefusedBreakerOpen {
		t.Fatalf("before the rotation: %+v, want %s", r, wire.StatusRefusedBreakerOpen)
	}
	env[credEnv] = newToken
	a, r := g.Check(in)
	if r != nil {
		t.Fatalf("after the rotation: refused %s %q", r.Status, r.Literal)
	}
	if a.BreakerGeneration != 4 {
		t.Fatalf("after the rotation: generation %d, want 4 (the closed state's)", a.BreakerGeneration)
	}
}
