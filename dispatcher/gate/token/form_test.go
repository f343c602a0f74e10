package token

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"math/big"
	"testing"
	"time"
)

// highS is raw with its signature's S replaced by N-S: the same signature in its
// other form, which ECDSA verifies as well.
func highS(t *testing.T, raw string) string {
	t.Helper()
	h, p, s := parts(raw)
	sig, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(sig) != 64 {
		t.Fatalf("signature %q: %v", s, err)
	}
	n := elliptic.P256().Params().N
	sv := new(big.Int).SetBytes(sig[32:])
	sv.Sub(n, sv)
	sv.FillBytes(sig[32:])
	return h + "." + p + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// ecdsaValid reports whether raw's signature verifies under pub by ECDSA alone.
func ecdsaValid(raw string, pub *ecdsa.PublicKey) bool {
	h, p, s := parts(raw)
	sig, _ := base64.RawURLEncoding.DecodeString(s)
	sum := sha256.Sum256([]byte(h + "." + p))
	return len(sig) == 64 && ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:]))
}

// Every minted token has its signature's S at most N/2. ECDSA picks either half at
// random, so 64 tokens all in the low half by chance is a 2^-64 event.
func TestMintedTokensAreLowS(t *testing.T) {
	k := mustKey(t)
	m := mustMinter(t, k)
	for i := range 64 {
		raw, _ := mustMint(t, m, basicRequest(), t0)
		_, _, s := parts(raw)
		sig, _ := base64.RawURLEncoding.DecodeString(s)
		if err := checkLowS(sig); err != nil {
			t.Fatalf("token %d: %v", i, err)
		}
		if !ecdsaValid(raw, k.Public()) {
			t.Fatalf("token %d: signature does not verify", i)
		}
	}
}

// A minted token with S flipped to N-S is a valid ECDSA signature of the same
// claims: a second string for one token. It is refused (the cache's side:
// TestVerifyCacheKeysOnTheExactString).
func TestHighSTokenRefused(t *testing.T) {
	k := mustKey(t)
	m := mustMinter(t, k)
	v := mustVerifier(t, VerifierConfig{Keys: []*ecdsa.PublicKey{k.Public()}})
	raw, _ := mustMint(t, m, basicRequest(), t0)
	flipped := highS(t, raw)
	if flipped == raw || !ecdsaValid(flipped, k.Public()) {
		t.Fatal("the flipped signature should differ and still verify by ECDSA alone")
	}
	_, err := v.Verify(flipped, t0.Add(time.Second))
	if !errors.Is(err, ErrBadSignature) || Reason(err) != "token:bad_signature" {
		t.Fatalf("high-S token: %v, want %v", err, ErrBadSignature)
	}
}

// The other spellings base64url decoding allows (unused low bits of a segment's
// last character set, a line break) are refused as malformed.
func TestNonCanonicalSegmentsRefused(t *testing.T) {
	k := mustKey(t)
	m := mustMinter(t, k)
	v := mustVerifier(t, VerifierConfig{Keys: []*ecdsa.PublicKey{k.Public()}})
	raw, _ := mustMint(t, m, basicRequest(), t0)
	if _, err := v.Verify(raw, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	h, p, s := parts(raw)
	// A 64-byte signature is 86 characters, the last carrying 2 bits and 4 unused.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := alphabet[(indexOf(alphabet, s[len(s)-1])|1)%64]
	bits := s[:len(s)-1] + string(last)
	if a, _ := base64.RawURLEncoding.DecodeString(s); true {
		b, err := base64.RawURLEncoding.DecodeString(bits)
		if err != nil || string(a) != string(b) || bits == s {
			t.Fatalf("%q should decode as %q does", bits, s)
		}
	}
	for name, tok := range map[string]string{
		"unused bits set": h + "." + p + "." + bits,
		"line break":      h + "." + p[:10] + "\n" + p[10:] + "." + s,
	} {
		_, err := v.Verify(tok, t0.Add(time.Second))
		if !errors.Is(err, ErrMalformed) || Reason(err) != "token:malformed" {
			t.Errorf("%s: %v, want %v", name, err, ErrMalformed)
		}
	}
}

func indexOf(s string, c byte) int {
	for i := range len(s) {
		if s[i] == c {
			return i
		}
	}
	return -1
}
