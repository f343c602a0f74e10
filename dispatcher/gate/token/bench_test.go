package token

import (
	"crypto/ecdsa"
	"testing"
)

// BenchmarkVerifyCached is the cost of verifying a token presented before: a
// SHA-256 of the string, a map lookup under a read lock, two time comparisons.
func BenchmarkVerifyCached(b *testing.B) {
	benchmarkVerify(b, 0)
}

// BenchmarkVerifyUncached is the full check: parse, ECDSA P-256 verification,
// strict claim decoding.
func BenchmarkVerifyUncached(b *testing.B) {
	benchmarkVerify(b, -1)
}

func benchmarkVerify(b *testing.B, cacheSize int) {
	k := mustKey(b)
	raw, _ := mustMint(b, mustMinter(b, k), basicRequest(), t0)
	v := mustVerifier(b, VerifierConfig{Keys: []*ecdsa.PublicKey{k.Public()}, CacheSize: cacheSize})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(raw, t0); err != nil {
			b.Fatal(err)
		}
	}
}
