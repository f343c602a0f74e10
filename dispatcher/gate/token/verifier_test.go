package token

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

func TestVerifyAcceptsMintedToken(t *testing.T) {
	k := mustKey(t)
	m := mustMinter(t, k)
	v := mustVerifier(t, VerifierConfig{Keys: []*ecdsa.PublicKey{k.Public()}})
	body := "x|y"
	req := MintRequest{Subject: "ci@build-3", Scope: Scope{Keys: []string{"GREET"}}, Risk: RiskHigh,
		Pin: strings.Repeat("0f", 32), Body: &body, MaxPayload: 64, TTL: 5 * time.Minute}
	raw, minted := mustMint(t, m, req, t0)
	got, err := v.Verify(raw, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, minted) {
		t.Fatalf("verified claims differ from minted:\n got %+v\nwant %+v", got, minted)
	}
}

// TestVerifyRefusals: every way a token is refused, with its sentinel and literal.
func TestVerifyRefusals(t *testing.T) {
	k := mustKey(t)
	m := mustMinter(t, k)
	other := mustKey(t)
	good, goodClaims := mustMint(t, m, basicRequest(), t0)
	h, p, s := parts(good)
	sig, _ := base64.RawURLEncoding.DecodeString(s)
	b64 := base64.RawURLEncoding.EncodeToString
	hdr := func(alg string) string { return `{"alg":"` + alg + `","kid":"` + k.ID() + `"}` }
	payload, _ := base64.RawURLEncoding.DecodeString(p)

	// HS256 keyed with the public key: the classic algorithm confusion.
	pubDER, _ := x509.MarshalPKIXPublicKey(k.Public())
	hsInput := b64([]byte(hdr("HS256"))) + "." + p
	mac := hmac.New(sha256.New, pubDER)
	mac.Write([]byte(hsInput))
	hs256 := hsInput + "." + b64(mac.Sum(nil))

	// ES384 with a P-384 key.
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	s384, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES384, Key: jose.JSONWebKey{Key: p384, KeyID: k.ID()}}, nil)
	jws384, _ := s384.Sign(payload)
	es384, _ := jws384.CompactSerialize()

	// A payload that widens the scope, under the original header and signature.
	wider := claimsJSON(t, goodClaims, func(c map[string]any) { c["scope"] = map[string]any{"categories": []string{"admin"}} })
	flipped := append([]byte(nil), sig...)
	flipped[10] ^= 1

	own := func(edit func(map[string]any)) string {
		return signRaw(t, k.priv, k.ID(), claimsJSON(t, goodClaims, edit))
	}
	json384 := `{"payload":"` + p + `","protected":"` + h + `","signature":"` + s + `"}`

	leeway := DefaultLeeway
	cases := []struct {
		name   string
		raw    string
		now    time.Time
		want   error
		reason string
	}{
		{"empty", "", t0, ErrMalformed, "token:malformed"},
		{"garbage", "not-a-token", t0, ErrMalformed, "token:malformed"},
		{"two parts", h + "." + p, t0, ErrMalformed, "token:malformed"},
		{"four parts", good + ".x", t0, ErrMalformed, "token:malformed"},
		{"bad base64", h + ".!!!." + s, t0, ErrMalformed, "token:malformed"},
		{"too long", good + strings.Repeat("A", MaxLen), t0, ErrMalformed, "token:malformed"},
		{"JSON serialization", json384, t0, ErrMalformed, "token:malformed"},
		{"header not JSON", b64([]byte("{")) + "." + p + "." + s, t0, ErrMalformed, "token:malformed"},
		{"alg none", unsigned(hdr("none"), payload, nil), t0, ErrAlgorithm, "token:alg_not_es256"},
		{"alg none with signature", unsigned(hdr("none"), payload, sig), t0, ErrAlgorithm, "token:alg_not_es256"},
		{"alg missing", unsigned(`{"kid":"`+k.ID()+`"}`, payload, sig), t0, ErrAlgorithm, "token:alg_not_es256"},
		{"alg HS256 keyed with the public key", hs256, t0, ErrAlgorithm, "token:alg_not_es256"},
		{"alg ES384", es384, t0, ErrAlgorithm, "token:alg_not_es256"},
		{"alg RS256 header on an ES256 signature", unsigned(hdr("RS256"), payload, sig), t0, ErrAlgorithm, "token:alg_not_es256"},
		{"alg lower case", unsigned(hdr("es256"), payload, sig), t0, ErrAlgorithm, "token:alg_not_es256"},
		{"unknown kid", signRaw(t, other.priv, other.ID(), payload), t0, ErrUnknownKey, "token:unknown_kid"},
		{"no kid", signRaw(t, k.priv, "", payload), t0, ErrUnknownKey, "token:unknown_kid"},
		{"kid of our key, signed by another", signRaw(t, other.priv, k.ID(), payload), t0, ErrBadSignature, "token:bad_signature"},
		{"payload widened", h + "." + b64(wider) + "." + s, t0, ErrBadSignature, "token:bad_signature"},
		{"signature flipped", h + "." + p + "." + b64(flipped), t0, ErrBadSignature, "token:bad_signature"},
		{"signature truncated", h + "." + p + "." + b64(sig[:61]), t0, ErrBadSignature, "token:bad_signature"},
		{"signature empty", h + "." + p + ".", t0, ErrBadSignature, "token:bad_signature"},
		{"header swapped for another kid", b64([]byte(`{"alg":"ES256","kid":"`+k.ID()+`","typ":"x"}`)) + "." + p + "." + s, t0, ErrBadSignature, "token:bad_signature"},
		{"unknown claim", own(func(c map[string]any) { c["admin"] = true }), t0, ErrMalformed, "token:malformed"},
		{"no jti", own(func(c map[string]any) { delete(c, "jti") }), t0, ErrMalformed, "token:malformed"},
		{"no exp", own(func(c map[string]any) { delete(c, "exp") }), t0, ErrMalformed, "token:malformed"},
		{"exp before iat", own(func(c map[string]any) { c["exp"] = goodClaims.IssuedAt - 1 }), t0, ErrMalformed, "token:malformed"},
		{"no aud", own(func(c map[string]any) { delete(c, "aud") }), t0, ErrMalformed, "token:malformed"},
		{"aud as array", own(func(c map[string]any) { c["aud"] = []string{testAudience} }), t0, ErrMalformed, "token:malformed"},
		{"no sub", own(func(c map[string]any) { delete(c, "sub") }), t0, ErrMalformed, "token:malformed"},
		{"bad risk", own(func(c map[string]any) { c["risk"] = "medium" }), t0, ErrMalformed, "token:malformed"},
		{"no risk", own(func(c map[string]any) { delete(c, "risk") }), t0, ErrMalformed, "token:malformed"},
		{"empty scope", own(func(c map[string]any) { c["scope"] = map[string]any{} }), t0, ErrMalformed, "token:malformed"},
		{"unknown scope field", own(func(c map[string]any) { c["scope"] = map[string]any{"keys": []string{"A"}, "all": true} }), t0, ErrMalformed, "token:malformed"},
		{"bad pin", own(func(c map[string]any) { c["pin"] = "zz" }), t0, ErrMalformed, "token:malformed"},
		{"negative max_payload", own(func(c map[string]any) { c["max_payload"] = -1 }), t0, ErrMalformed, "token:malformed"},
		{"iat as string", own(func(c map[string]any) { c["iat"] = "now" }), t0, ErrMalformed, "token:malformed"},
		{"payload not an object", signRaw(t, k.priv, k.ID(), []byte(`[1]`)), t0, ErrMalformed, "token:malformed"},
		{"trailing payload", signRaw(t, k.priv, k.ID(), append(append([]byte(nil), payload...), []byte(` {}`)...)), t0, ErrMalformed, "token:malformed"},
		{"stray brace after the payload", signRaw(t, k.priv, k.ID(), append(append([]byte(nil), payload...), '}')), t0, ErrMalformed, "token:malformed"},
		{"expired at exp plus leeway", good, goodClaims.ExpiryTime().Add(leeway), ErrExpired, "token:expired"},
		{"expired long ago", good, t0.Add(24 * time.Hour), ErrExpired, "token:expired"},
		{"issued in the future", good, goodClaims.IssuedTime().Add(-leeway - time.Second), ErrNotYetValid, "token:not_yet_valid"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A fresh verifier each time, so no case is answered from the cache.
			v := mustVerifier(t, VerifierConfig{Keys: []*ecdsa.PublicKey{k.Public()}})
			c, err := v.Verify(tc.raw, tc.now)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
			if r := Reason(err); r != tc.reason {
				t.Fatalf("Reason = %q, want %q", r, tc.reason)
			}
			if !reflect.DeepEqual(c, Claims{}) {
				t.Fatalf("a refused token returned claims %+v", c)
			}
		})
	}
}

func TestVerifyLeewayEdges(t *testing.T) {
	k := mustKey(t)
	raw, c := mustMint(t, mustMinter(t, k), basicRequest(), t0)
	v := mustVerifier(t, VerifierConfig{Keys: []*ecdsa.PublicKey{k.Public()}, Leeway: 2 * time.Second, CacheSize: -1})
	for _, now := range []time.Time{c.IssuedTime().Add(-2 * time.Second), c.ExpiryTime().Add(2*time.Second - time.Nanosecond)} {
		if _, err := v.Verify(raw, now); err != nil {
			t.Fatalf("at %v (inside the leeway): %v", now, err)
		}
	}
	if _, err := v.Verify(raw, c.IssuedTime().Add(-2*time.Second-time.Nanosecond)); !errors.Is(err, ErrNotYetValid) {
		t.Fatalf("before iat-leeway: %v", err)
	}
	if _, err := v.Verify(raw, c.ExpiryTime().Add(2*time.Second)); !errors.Is(err, ErrExpired) {
		t.Fatalf("at exp+leeway: %v", err)
	}
	none := mustVerifier(t, VerifierConfig{Keys: []*ecdsa.PublicKey{k.Public()}, Leeway: -1})
	if _, err := none.Verify(raw, c.ExpiryTime()); !errors.Is(err, ErrExpired) {
		t.Fatalf("no leeway, at exp: %v", err)
	}
}

func TestVerifyAudience(t *testing.T) {
	k := mustKey(t)
	raw, _ := mustMint(t, mustMinter(t, k), basicRequest(), t0)
	v := mustVerifier(t, VerifierConfig{Keys: []*ecdsa.PublicKey{k.Public()}, Audience: "capdir-prod"})
	c, err := v.Authenticate(raw, t0)
	if err != nil {
		t.Fatalf("Authenticate does not check the audience: %v", err)
	}
	if err := v.CheckAudience(&c); !errors.Is(err, ErrAudience) || Reason(err) != "token:audience:"+testAudience {
		t.Fatalf("CheckAudience = %v (%s)", err, Reason(err))
	}
	if _, err := v.Verify(raw, t0); Reason(err) != "token:audience:capdir-test" {
		t.Fatalf("Verify = %v, reason %q", err, Reason(err))
	}
}

// TestVerifyKeyRotation: sign with one key, verify with several.
func TestVerifyKeyRotation(t *testing.T) {
	oldKey, newKey := mustKey(t), mustKey(t)
	oldTok, _ := mustMint(t, mustMinter(t, oldKey), basicRequest(), t0)
	newTok, _ := mustMint(t, mustMinter(t, newKey), basicRequest(), t0)
	both := mustVerifier(t, VerifierConfig{Keys: []*ecdsa.PublicKey{newKey.Public(), oldKey.Public()}})
	for _, raw := range []string{oldTok, newTok} {
		if _, err := both.Verify(raw, t0); err != nil {
			t.Fatalf("verifier holding both keys: %v", err)
		}
	}
	retired := mustVerifier(t, VerifierConfig{Keys: []*ecdsa.PublicKey{newKey.Public()}})
	if _, err := retired.Verify(oldTok, t0); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("old key retired: %v", err)
	}
}

func TestVerifierConfigValidate(t *testing.T) {
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	_, err := NewVerifier(VerifierConfig{Keys: []*ecdsa.PublicKey{&p384.PublicKey}, Leeway: time.Hour})
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("NewVerifier = %v, want ErrConfig", err)
	}
	for _, want := range []string{"Keys[0]", "Audience must be", "Leeway 1h0m0s is over 1m0s"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not report %q", err, want)
		}
	}
	if _, err := NewVerifier(VerifierConfig{Audience: "a"}); err == nil || !strings.Contains(err.Error(), "at least one key") {
		t.Fatalf("no keys: %v", err)
	}
}

func TestReasonLiterals(t *testing.T) {
	for err, want := range map[error]string{
		ErrRequired:                              "token:required",
		ErrRevoked:                               "token:revoked",
		ErrOwnerSubject:                          "token:owner_subject",
		&AudienceError{Got: "x"}:                 "token:audience:x",
		errors.New("other"):                      "token:invalid",
		errors.Join(errors.New("a"), ErrExpired): "token:expired",
	} {
		if got := Reason(err); got != want {
			t.Errorf("Reason(%v) = %q, want %q", err, got, want)
		}
	}
}

func TestIsOwnerSubject(t *testing.T) {
	for sub, want := range map[string]bool{
		"owner": true, "OWNER": true, "owner:terminal-key": true, "Owner:x": true,
		"owner2": false, "owners:x": false, "agent:owner": false, "": false, "own": false,
	} {
		if got := IsOwnerSubject(sub); got != want {
			t.Errorf("IsOwnerSubject(%q) = %v, want %v", sub, got, want)
		}
	}
}
