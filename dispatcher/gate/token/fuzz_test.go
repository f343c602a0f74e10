package token

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"reflect"
	"strings"
	"testing"
	"time"
)

// counterReader yields 0, 1, 2, … as bytes, so token ids are the same every run.
type counterReader struct{ n uint64 }

func (r *counterReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r.n)
		r.n++
	}
	return len(p), nil
}

// fuzzFixture is a fixed key and the tokens minted with it: the same claims every
// run (the key, the clock and the ids are fixed; only the ECDSA signatures vary),
// so a corpus entry saved by one run is judged by the next against the same claims.
type fuzzFixture struct {
	key     *Key
	v       *Verifier
	minted  map[string]Claims // by jti
	tokens  []string
	now     time.Time
	spoiler *Key // another key, to sign with
}

func newFuzzFixture(t testing.TB) *fuzzFixture {
	d := sha256.Sum256([]byte("capdir token fuzz key"))
	priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d[:])
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMinter(MinterConfig{Key: k, Audience: testAudience, Rand: &counterReader{}})
	if err != nil {
		t.Fatal(err)
	}
	fx := &fuzzFixture{key: k, minted: map[string]Claims{}, now: t0.Add(10 * time.Second), spoiler: mustKey(t)}
	// No cache: every input is judged the long way (the cache is keyed on the exact
	// string, and is covered by its own tests).
	fx.v = mustVerifier(t, VerifierConfig{Keys: []*ecdsa.PublicKey{k.Public()}, CacheSize: -1})
	body, empty := "fixed|body", ""
	for _, req := range []MintRequest{
		basicRequest(),
		{Subject: "a", Scope: Scope{Keys: []string{"K"}}, Risk: RiskHigh, Pin: strings.Repeat("a1", 32), Body: &body, MaxPayload: 100, TTL: time.Hour},
		{Subject: "b", Scope: Scope{Categories: []string{"tools", "grok"}}, Body: &empty},
	} {
		raw, c := mustMint(t, m, req, t0)
		fx.minted[c.ID] = c
		fx.tokens = append(fx.tokens, raw)
	}
	return fx
}

// seeds are the valid tokens and ways of spoiling them.
func (fx *fuzzFixture) seeds(t testing.TB) []string {
	b64 := base64.RawURLEncoding.EncodeToString
	out := append([]string{"", ".", "..", "a.b.c"}, fx.tokens...)
	for _, raw := range fx.tokens {
		h, p, s := parts(raw)
		payload, _ := base64.RawURLEncoding.DecodeString(p)
		sig, _ := base64.RawURLEncoding.DecodeString(s)
		flipped := append([]byte(nil), sig...)
		flipped[0] ^= 0x80
		widened := strings.Replace(string(payload), `"risk":"low"`, `"risk":"high"`, 1)
		hsInput := b64([]byte(`{"alg":"HS256","kid":"`+fx.key.ID()+`"}`)) + "." + p
		mac := hmac.New(sha256.New, []byte(fx.key.ID()))
		mac.Write([]byte(hsInput))
		out = append(out,
			raw[:len(raw)/2], raw[:len(raw)-1], raw+"A", raw+".",
			h+"."+p+"."+b64(flipped),
			h+"."+b64([]byte(widened))+"."+s,
			unsigned(`{"alg":"none","kid":"`+fx.key.ID()+`"}`, payload, nil),
			unsigned(`{"alg":"none"}`, payload, nil),
			hsInput+"."+b64(mac.Sum(nil)),
			unsigned(`{"alg":"ES256","kid":"`+fx.key.ID()+`","crit":["exp"],"exp":1}`, payload, sig),
			signRaw(t, fx.spoiler.priv, fx.key.ID(), payload),
			signRaw(t, fx.spoiler.priv, fx.spoiler.ID(), payload),
			`{"payload":"`+p+`","protected":"`+h+`","signature":"`+s+`"}`,
		)
	}
	return out
}

// FuzzVerify: whatever the input, Verify does not panic, every refusal has a
// token:… literal, and every token it accepts carries exactly the claims of a
// token this test minted: nothing unsigned, re-signed or tampered gets through.
func FuzzVerify(f *testing.F) {
	fx := newFuzzFixture(f)
	for _, s := range fx.seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		c, err := fx.v.Verify(raw, fx.now)
		if err != nil {
			if r := Reason(err); !strings.HasPrefix(r, "token:") || r == "token:invalid" {
				t.Fatalf("refusal %v has reason %q", err, r)
			}
			if !reflect.DeepEqual(c, Claims{}) {
				t.Fatalf("refused with claims %+v", c)
			}
			return
		}
		want, ok := fx.minted[c.ID]
		if !ok || !reflect.DeepEqual(c, want) {
			t.Fatalf("accepted claims no test token carries:\n%+v\ninput %q", c, raw)
		}
	})
}

// TestFuzzFixtureIsStable pins what makes a saved corpus meaningful: the same ids
// and claims every run.
func TestFuzzFixtureIsStable(t *testing.T) {
	a, b := newFuzzFixture(t), newFuzzFixture(t)
	if !reflect.DeepEqual(a.minted, b.minted) {
		t.Fatal("two fixtures minted different claims")
	}
	if _, ok := a.minted["000102030405060708090a0b0c0d0e0f"]; !ok {
		t.Fatalf("first token id is not the counter's: %v", a.minted)
	}
}
