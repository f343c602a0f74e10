package gate_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/gate"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog/wire"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

const audience = "capdir-test"

// tokenWorld is a gate with tokens on, a fake clock, a directory of four rows and
// a revocation list.
type tokenWorld struct {
	t       *testing.T
	priv    *ecdsa.PrivateKey
	key     *token.Key
	minter  *token.Minter
	gate    *gate.Gate
	now     time.Time
	revoked map[string]bool
	rows    map[string]*contract.Row
}

func newTokenWorld(t *testing.T) *tokenWorld {
	priv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	k, err := token.NewKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	w := &tokenWorld{t: t, priv: priv, key: k, now: t0, revoked: map[string]bool{}, rows: map[string]*contract.Row{
		"GREET":  {Key: "GREET", Type: "fn", Target: "greet", Category: "tools", Enabled: 1},
		"PAY":    {Key: "PAY", Type: "fn", Target: "pay", Category: "money", Enabled: 1, Sensitive: 1, InputSchema: `{"type":"string"}`},
		"OFF":    {Key: "OFF", Type: "fn", Target: "off", Category: "tools", Enabled: 0},
		"HIDDEN": {Key: "HIDDEN", Type: "fn", Target: "hidden", Category: "internal", Enabled: 1},
	}}
	w.minter, err = token.NewMinter(token.MinterConfig{Key: k, Audience: audience})
	if err != nil {
		t.Fatal(err)
	}
	v, err := token.NewVerifier(token.VerifierConfig{Keys: []*ecdsa.PublicKey{k.Public()}, Audience: audience})
	if err != nil {
		t.Fatal(err)
	}
	w.gate, err = gate.New(gate.Config{
		MaxPayload: 1024,
		Tokens:     v,
		Revoked:    func(jti string) bool { return w.revoked[jti] },
		Clock:      func() time.Time { return w.now },
		Suggest:    func(string) []string { return []string{"GREET", "HIDDEN"} },
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *tokenWorld) mint(req token.MintRequest) (string, token.Claims) {
	w.t.Helper()
	if req.Subject == "" {
		req.Subject = "agent-7"
	}
	raw, c, err := w.minter.Mint(req, t0)
	if err != nil {
		w.t.Fatal(err)
	}
	return raw, c
}

// forge signs claims no minter would make, with the deployment's own key.
func (w *tokenWorld) forge(c token.Claims) string {
	w.t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: w.priv, KeyID: w.key.ID()}}, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	b, _ := json.Marshal(&c)
	jws, err := s.Sign(b)
	if err != nil {
		w.t.Fatal(err)
	}
	raw, _ := jws.CompactSerialize()
	raw, err = token.LowS(raw) // the one form a verifier accepts
	if err != nil {
		w.t.Fatal(err)
	}
	return raw
}

// input is what the worker would hand the gate for key.
func (w *tokenWorld) input(key, body, tok string, owner bool) *gate.Input {
	in := &gate.Input{Req: &wire.InvocationRequest{InvocationID: "inv_test", Key: key, Body: body, Token: tok}, Owner: owner}
	if row, ok := w.rows[key]; ok {
		in.Row, in.Fingerprint = row, contract.Fingerprint(row)
	} else {
		in.RowErr, in.NotFound = errors.New("not found"), true
	}
	return in
}

func scope(keys ...string) token.Scope { return token.Scope{Keys: keys} }

func strp(s string) *string { return &s }

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// sum16 is the first 16 hex digits of the SHA-256 of s.
func sum16(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// TestGateTokenChecks walks the token checks in their order: each case is refused
// by the check it names (or admitted), and where it also fails later checks, the
// earlier check is the one that answers.
func TestGateTokenChecks(t *testing.T) {
	w := newTokenWorld(t)
	greetFP := contract.Fingerprint(w.rows["GREET"])
	oldFP := strings.Repeat("0", 64)

	greet, greetClaims := w.mint(token.MintRequest{Scope: scope("GREET")})
	revokedTok, revokedClaims := w.mint(token.MintRequest{Scope: scope("GREET")})
	w.revoked[revokedClaims.ID] = true
	listedFalse, c2 := w.mint(token.MintRequest{Scope: scope("GREET")})
	other, _ := token.NewMinter(token.MinterConfig{Key: w.key, Audience: "capdir-other"})
	foreign, _, _ := other.Mint(token.MintRequest{Subject: "agent-7", Scope: scope("GREET")}, t0)
	w.revoked[c2.ID] = false // on the list, not revoked
	ownerSub := greetClaims
	ownerSub.ID, ownerSub.Subject, ownerSub.Scope = "f0", "owner:terminal-key", scope("HIDDEN")
	ownerTok := w.forge(ownerSub)
	foreignOwner := ownerSub
	foreignOwner.ID, foreignOwner.Audience = "f1", "capdir-other"
	foreignOwnerTok := w.forge(foreignOwner)
	tools, _ := w.mint(token.MintRequest{Scope: token.Scope{Categories: []string{"tools"}}})
	ghost, _ := w.mint(token.MintRequest{Scope: scope("GHOST", "GREET")})
	pinnedOld, _ := w.mint(token.MintRequest{Scope: scope("GREET"), Pin: oldFP})
	pinnedNow, _ := w.mint(token.MintRequest{Scope: scope("GREET"), Pin: greetFP})
	pinnedPay, _ := w.mint(token.MintRequest{Scope: scope("PAY"), Pin: oldFP})
	payLow, _ := w.mint(token.MintRequest{Scope: scope("PAY")})
	payHigh, _ := w.mint(token.MintRequest{Scope: scope("PAY"), Risk: token.RiskHigh})
	payLowFixed, _ := w.mint(token.MintRequest{Scope: scope("PAY"), Body: strp("1|2")})
	fixed, _ := w.mint(token.MintRequest{Scope: scope("GREET"), Body: strp("Ada")})
	fixedEmpty, _ := w.mint(token.MintRequest{Scope: scope("GREET"), Body: strp("")})
	small, _ := w.mint(token.MintRequest{Scope: scope("GREET"), MaxPayload: 3})
	smallFixed, _ := w.mint(token.MintRequest{Scope: scope("GREET"), Body: strp("abc"), MaxPayload: 3})
	offTok, _ := w.mint(token.MintRequest{Scope: token.Scope{Keys: []string{"OFF"}}})
	short, _ := w.mint(token.MintRequest{Scope: scope("HIDDEN"), TTL: time.Second})
	seg := strings.Split(greet, ".")
	p := seg[1]
	tampered := seg[0] + "." + seg[1] + "." + seg[2][:len(seg[2])-4] + "AAAA"
	alien, _ := token.GenerateKey()
	alienMinter, _ := token.NewMinter(token.MinterConfig{Key: alien, Audience: audience})
	alienTok, _, _ := alienMinter.Mint(token.MintRequest{Subject: "agent-7", Scope: scope("GREET")}, t0)
	none := b64(`{"alg":"none","kid":"`+w.key.ID()+`"}`) + "." + p + "."
	big := strings.Repeat("x", 2000)

	const (
		tok      = wire.StatusRefusedToken
		scopeSt  = wire.StatusRefusedScope
		pinSt    = wire.StatusRefusedContractChanged
		payload  = wire.StatusRefusedPayloadTooLarge
		unknown  = wire.StatusRefusedUnknownKey
		disabled = wire.StatusRefusedDisabled
		admitted = ""
	)
	cases := []struct {
		name   string
		key    string
		body   string
		token  string
		owner  bool
		at     time.Duration // after t0
		status string
		reason string
	}{
		// 1. credential: the owner's attestation, or a token that authenticates.
		{"no credential", "GREET", "", "", false, 0, tok, "token:required"},
		{"no credential, unknown key", "NOPE", "", "", false, 0, tok, "token:required"},
		{"malformed", "GREET", "", "garbage", false, 0, tok, "token:malformed"},
		{"alg none", "GREET", "", none, false, 0, tok, "token:alg_not_es256"},
		{"unknown key", "GREET", "", alienTok, false, 0, tok, "token:unknown_kid"},
		{"tampered", "GREET", "", tampered, false, 0, tok, "token:bad_signature"},
		{"expired", "GREET", "", greet, false, 61*time.Second + token.DefaultLeeway, tok, "token:expired"},
		{"expired beats revoked", "GREET", "", revokedTok, false, time.Hour, tok, "token:expired"},
		{"not yet valid", "GREET", "", greet, false, -time.Minute, tok, "token:not_yet_valid"},
		{"owner attested needs no token", "GREET", "", "", true, 0, admitted, ""},
		{"owner attested ignores a bad token", "HIDDEN", "", "garbage", true, 0, admitted, ""},
		{"owner attested, expired token ignored", "PAY", "", greet, true, time.Hour, admitted, ""},
		// 2. revocation.
		{"revoked", "GREET", "", revokedTok, false, 0, tok, "token:revoked"},
		{"revoked beats out of scope", "HIDDEN", "", revokedTok, false, 0, tok, "token:revoked"},
		{"listed as not revoked", "GREET", "", listedFalse, false, 0, admitted, ""},
		// 3. audience.
		{"other audience", "GREET", "", foreign, false, 0, tok, "token:audience:capdir-other"},
		{"other audience beats owner subject", "HIDDEN", "", foreignOwnerTok, false, 0, tok, "token:audience:capdir-other"},
		// 4. owner gate.
		{"owner subject", "HIDDEN", "", ownerTok, false, 0, tok, "token:owner_subject"},
		// 5. scope, before anything that tells which rows exist.
		{"key outside scope", "HIDDEN", "", greet, false, 0, scopeSt, "scope:HIDDEN"},
		{"no such key outside scope", "NOPE", "", greet, false, 0, scopeSt, "scope:NOPE"},
		{"disabled row outside scope", "OFF", "", greet, false, 0, scopeSt, "scope:OFF"},
		{"sensitive row outside scope", "PAY", "", greet, false, 0, scopeSt, "scope:PAY"},
		{"scope beats payload ceiling", "HIDDEN", big, greet, false, 0, scopeSt, "scope:HIDDEN"},
		{"category in scope", "GREET", "", tools, false, 0, admitted, ""},
		{"category outside scope", "HIDDEN", "", tools, false, 0, scopeSt, "scope:HIDDEN"},
		{"category token, no such key", "NOPE", "", tools, false, 0, scopeSt, "scope:NOPE"},
		// payload ceiling of the deployment, then the row.
		{"deployment payload ceiling", "GREET", big, greet, false, 0, payload, "ERR:payload_too_large:2000>1024"},
		{"key in scope without a row", "GHOST", "", ghost, false, 0, unknown, `{"attempted":"GHOST","did_you_mean":["GREET"],"error":"unknown_key","ran":false}`},
		// 6. contract pin.
		{"pin changed", "GREET", "", pinnedOld, false, 0, pinSt, "contract_changed:" + oldFP + "!=" + greetFP},
		{"pin holds", "GREET", "", pinnedNow, false, 0, admitted, ""},
		{"pin beats risk ceiling", "PAY", "", pinnedPay, false, 0, pinSt, "contract_changed:" + oldFP + "!=" + contract.Fingerprint(w.rows["PAY"])},
		// 7. risk ceiling.
		{"sensitive row, low token", "PAY", "", payLow, false, 0, scopeSt, "risk_ceiling:low<row:high"},
		{"risk beats fixed body", "PAY", "9|9", payLowFixed, false, 0, scopeSt, "risk_ceiling:low<row:high"},
		{"sensitive row, high token: held for the owner's approval", "PAY", "", payHigh, false, 0, wire.StatusPendingApproval, "approval_pending"},
		// 8. fixed body.
		{"body not the fixed one", "GREET", "Bob", fixed, false, 0, scopeSt, "body_fixed:" + sum16("Ada") + "!=" + sum16("Bob")},
		{"fixed body sent", "GREET", "Ada", fixed, false, 0, admitted, ""},
		{"fixed empty body, one sent", "GREET", "x", fixedEmpty, false, 0, scopeSt, "body_fixed:" + sum16("") + "!=" + sum16("x")},
		{"fixed empty body sent", "GREET", "", fixedEmpty, false, 0, admitted, ""},
		{"fixed body beats token payload", "GREET", "abcd", smallFixed, false, 0, scopeSt, "body_fixed:" + sum16("abc") + "!=" + sum16("abcd")},
		// 9. the token's payload ceiling.
		{"token payload ceiling", "GREET", "abcd", small, false, 0, payload, "payload_ceiling:4>3"},
		{"token payload at the ceiling", "GREET", "abc", small, false, 0, admitted, ""},
		// then the row's own state.
		{"disabled row in scope", "OFF", "", offTok, false, 0, disabled, "ERR:disabled:OFF"},
		{"disabled row of a category in scope: as no row", "OFF", "", tools, false, 0, scopeSt, "scope:OFF"},
		{"owner attested, disabled row", "OFF", "", "", true, 0, disabled, "ERR:disabled:OFF"},
		{"short token inside its second", "HIDDEN", "", short, false, time.Second + token.DefaultLeeway - time.Millisecond, admitted, ""},
		{"short token after it", "HIDDEN", "", short, false, time.Second + token.DefaultLeeway, tok, "token:expired"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w.now = t0.Add(tc.at)
			a, r := w.gate.Check(w.input(tc.key, tc.body, tc.token, tc.owner))
			saw(r)
			if tc.status == admitted {
				if r != nil {
					t.Fatalf("refused %s %q, want admitted", r.Status, r.Literal)
				}
				if a.Row == nil || a.Row.Key != tc.key {
					t.Fatalf("admitted without its row: %+v", a)
				}
				if (a.Token == nil) != tc.owner {
					t.Fatalf("Admission.Token = %v for owner=%v", a.Token, tc.owner)
				}
				return
			}
			if r == nil {
				t.Fatalf("admitted, want %s %q", tc.status, tc.reason)
			}
			if r.Status != tc.status || r.Literal != tc.reason {
				t.Fatalf("refused %s %q\nwant    %s %q", r.Status, r.Literal, tc.status, tc.reason)
			}
		})
	}
}

// TestGateScopeRefusalRevealsNothing: to a token holder, a row outside its scope
// and a key with no row are refused alike; the row is not even recorded.
func TestGateScopeRefusalRevealsNothing(t *testing.T) {
	w := newTokenWorld(t)
	tok, _ := w.mint(token.MintRequest{Scope: scope("GREET")})
	aRow, rRow := w.gate.Check(w.input("HIDDEN", "", tok, false))
	w.rows["NOPE"] = nil
	delete(w.rows, "NOPE")
	aNone, rNone := w.gate.Check(w.input("NOPE", "", tok, false))
	if rRow == nil || rNone == nil {
		t.Fatal("admitted")
	}
	if rRow.Status != rNone.Status || strings.TrimPrefix(rRow.Literal, "scope:HIDDEN") != strings.TrimPrefix(rNone.Literal, "scope:NOPE") ||
		!reflect.DeepEqual(rRow.Extra, rNone.Extra) {
		t.Fatalf("refusals differ: %+v vs %+v", rRow, rNone)
	}
	if aRow.Row != nil || aRow.Fingerprint != "" || aNone.Row != nil {
		t.Fatalf("a scope refusal recorded the row: %+v", aRow)
	}
}

// TestGateCategoryTokenDisabledRowRevealsNothing: to a token reaching rows by
// their category, a disabled row of that category (which discovery hides from it)
// is refused as a key with no row is, at the same check, so no later check (a
// fixed body, the token's payload ceiling) answers for it either; the row is not
// recorded.
func TestGateCategoryTokenDisabledRowRevealsNothing(t *testing.T) {
	w := newTokenWorld(t)
	tools, _ := w.mint(token.MintRequest{Scope: token.Scope{Categories: []string{"tools"}}})
	toolsFixed, _ := w.mint(token.MintRequest{Scope: token.Scope{Categories: []string{"tools"}}, Body: strp("Ada")})
	toolsSmall, _ := w.mint(token.MintRequest{Scope: token.Scope{Categories: []string{"tools"}}, MaxPayload: 2})
	for _, tok := range []string{tools, toolsFixed, toolsSmall} {
		aOff, rOff := w.gate.Check(w.input("OFF", "Bob", tok, false))
		_, rNone := w.gate.Check(w.input("NOPE", "Bob", tok, false))
		if rOff == nil || rNone == nil {
			t.Fatal("admitted")
		}
		if rOff.Status != rNone.Status || rOff.Literal != "scope:OFF" || rNone.Literal != "scope:NOPE" ||
			rOff.Check != rNone.Check || !reflect.DeepEqual(rOff.Extra, rNone.Extra) {
			t.Fatalf("refusals differ: %+v vs %+v", rOff, rNone)
		}
		if aOff.Row != nil || aOff.Fingerprint != "" {
			t.Fatalf("the refusal recorded the disabled row: %+v", aOff)
		}
		if r := w.gate.Access(w.input("OFF", "Bob", tok, false)); r == nil || r.Literal != "scope:OFF" {
			t.Fatalf("Access of the disabled row: %+v", r)
		}
	}
	if _, r := w.gate.Check(w.input("OFF", "", "", true)); r == nil || r.Literal != "ERR:disabled:OFF" {
		t.Fatalf("the owner: %+v, want ERR:disabled:OFF", r)
	}
}

// TestGateUnknownKeySuggestionsForTheOwner: the owner still gets every suggestion.
func TestGateUnknownKeySuggestionsForTheOwner(t *testing.T) {
	w := newTokenWorld(t)
	_, r := w.gate.Check(w.input("GHOST", "", "", true))
	if r == nil || !reflect.DeepEqual(r.Extra["did_you_mean"], []string{"GREET", "HIDDEN"}) {
		t.Fatalf("owner's unknown_key = %+v", r)
	}
	tok, _ := w.mint(token.MintRequest{Scope: scope("GHOST")})
	_, r = w.gate.Check(w.input("GHOST", "", tok, false))
	if r == nil || !reflect.DeepEqual(r.Extra["did_you_mean"], []string{}) {
		t.Fatalf("token holder's unknown_key = %+v, want no suggestion outside its scope", r)
	}
}

// testVerifier is a verifier of a fresh key, for gates whose tests need no token.
func testVerifier(t testing.TB) *token.Verifier {
	t.Helper()
	k, err := token.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	v, err := token.NewVerifier(token.VerifierConfig{Keys: []*ecdsa.PublicKey{k.Public()}, Audience: audience})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func neverRevoked(string) bool { return false }

// TestGateConfigNeedsTokens: there is no gate without the token checks, so no
// request that capdir does not attest as the owner's runs without a token.
func TestGateConfigNeedsTokens(t *testing.T) {
	_, err := gate.New(gate.Config{MaxPayload: 1024})
	if err == nil || !strings.Contains(err.Error(), "Tokens is required") || !strings.Contains(err.Error(), "Revoked is required") {
		t.Fatalf("gate.New without Tokens and Revoked = %v", err)
	}
	_, err = gate.New(gate.Config{MaxPayload: 1, Tokens: testVerifier(t)})
	if err == nil || !strings.Contains(err.Error(), "Revoked is required with Tokens") {
		t.Fatalf("gate.New without Revoked = %v", err)
	}
}

// TestGateRevocationUnknown: a token whose revocation the worker could not look
// up is refused, not admitted unchecked; the owner is not concerned.
func TestGateRevocationUnknown(t *testing.T) {
	w := newTokenWorld(t)
	tok, _ := w.mint(token.MintRequest{Scope: scope("GREET")})
	in := w.input("GREET", "", tok, false)
	in.RevokedErr = errors.New("eventlog: last message of capdir.ctl.token.x: timeout")
	a, r := w.gate.Check(in)
	saw(r)
	if r == nil || r.Status != wire.StatusFailedBeforeRun || r.Literal != "ERR:revocation:eventlog: last message of capdir.ctl.token.x: timeout" || a.Token == nil {
		t.Fatalf("refusal %+v, admission %+v", r, a)
	}
	in = w.input("GREET", "", "", true)
	in.RevokedErr = errors.New("ignored")
	if _, r := w.gate.Check(in); r != nil {
		t.Fatalf("owner refused: %+v", r)
	}
}

// TestGateCaller: an entry point's check of who the caller is gives the same
// literal refusals as the gate, in the same order, and reads no row.
func TestGateCaller(t *testing.T) {
	w := newTokenWorld(t)
	good, c := w.mint(token.MintRequest{Subject: "ci@build-3", Scope: scope("NOROW")})
	revoked, rc := w.mint(token.MintRequest{Scope: scope("GREET")})
	w.revoked[rc.ID] = true
	other, _ := token.NewMinter(token.MinterConfig{Key: w.key, Audience: "capdir-other"})
	foreign, _, _ := other.Mint(token.MintRequest{Subject: "agent-7", Scope: scope("GREET")}, t0)
	ownerSub := c
	ownerSub.ID, ownerSub.Subject = "f0", "owner"
	for _, tc := range []struct {
		name, raw string
		at        time.Duration
		reason    string
	}{
		{"none", "", 0, "token:required"},
		{"garbage", "garbage", 0, "token:malformed"},
		{"expired", good, time.Hour, "token:expired"},
		{"revoked", revoked, 0, "token:revoked"},
		{"other audience", foreign, 0, "token:audience:capdir-other"},
		{"owner subject", w.forge(ownerSub), 0, "token:owner_subject"},
	} {
		w.now = t0.Add(tc.at)
		_, r := w.gate.Caller(tc.raw)
		saw(r)
		if r == nil || r.Status != wire.StatusRefusedToken || r.Literal != tc.reason {
			t.Errorf("%s: Caller refusal %+v, want %s", tc.name, r, tc.reason)
		}
		_, rg := w.gate.Check(w.input("GREET", "", tc.raw, false))
		if rg == nil || r == nil || rg.Literal != r.Literal {
			t.Errorf("%s: the gate says %+v, Caller %+v", tc.name, rg, r)
		}
	}
	w.now = t0
	got, r := w.gate.Caller(good)
	if r != nil || got == nil || got.Subject != "ci@build-3" || got.ID != c.ID {
		t.Fatalf("Caller(good) = %+v, %+v", got, r)
	}
}

// TestGateAdmissionCarriesTheToken: the claims are recorded from the first check
// on, for the receipt's actor, even when a later check refuses.
func TestGateAdmissionCarriesTheToken(t *testing.T) {
	w := newTokenWorld(t)
	tok, c := w.mint(token.MintRequest{Subject: "ci@build-3", Scope: scope("GREET")})
	w.revoked[c.ID] = true
	a, r := w.gate.Check(w.input("GREET", "", tok, false))
	if r == nil || a.Token == nil || a.Token.Subject != "ci@build-3" || a.Token.ID != c.ID {
		t.Fatalf("Admission = %+v, refusal %+v", a, r)
	}
}
