package token

import (
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// t0 is the tests' fixed clock.
var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

const testAudience = "capdir-test"

func mustKey(t testing.TB) *Key {
	t.Helper()
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustMinter(t testing.TB, k *Key) *Minter {
	t.Helper()
	m, err := NewMinter(MinterConfig{Key: k, Audience: testAudience})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustVerifier(t testing.TB, cfg VerifierConfig) *Verifier {
	t.Helper()
	if cfg.Audience == "" {
		cfg.Audience = testAudience
	}
	v, err := NewVerifier(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustMint(t testing.TB, m *Minter, req MintRequest, now time.Time) (string, Claims) {
	t.Helper()
	raw, c, err := m.Mint(req, now)
	if err != nil {
		t.Fatal(err)
	}
	return raw, c
}

// basicRequest is a valid mint request.
func basicRequest() MintRequest {
	return MintRequest{Subject: "agent-7", Scope: Scope{Keys: []string{"GREET"}, Categories: []string{"tools"}}}
}

// signRaw signs payload with priv under an arbitrary kid, as a minter would (low S), so a
// test can make a validly signed token with claims no minter makes.
func signRaw(t testing.TB, priv *ecdsa.PrivateKey, kid string, payload []byte) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: priv, KeyID: kid}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	if raw, err = LowS(raw); err != nil { // as a minter writes it
		t.Fatal(err)
	}
	return raw
}

// claimsJSON is c as a map, to change or add one claim.
func claimsJSON(t testing.TB, c Claims, edit func(map[string]any)) []byte {
	t.Helper()
	b, _ := json.Marshal(&c)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// unsigned builds header.payload.sig from JSON header and payload and raw sig.
func unsigned(header string, payload []byte, sig []byte) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString(payload) + "." + enc.EncodeToString(sig)
}

// parts splits a compact token.
func parts(raw string) (h, p, s string) {
	x := strings.Split(raw, ".")
	return x[0], x[1], x[2]
}
