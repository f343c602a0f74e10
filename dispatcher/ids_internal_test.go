package dispatcher

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"strings"
	"sync"
	"testing"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/allocstest"
)

// The derived ids are the HMAC-SHA256 of their domain and input under the
// deployment's key, whatever the goroutine or the pooled MAC computing them:
// every node, and every version, must derive the same ids (an idempotent call's
// invocation id outlives the process that first derived it).
func TestDerivedIDsAreTheKeyedHMAC(t *testing.T) {
	ids := newReceiptIDs("salt")
	want := func(prefix string, parts ...[]byte) string {
		m := hmac.New(sha256.New, ids.key)
		for _, p := range parts {
			m.Write(p)
		}
		return prefix + idEncoding.EncodeToString(m.Sum(nil))[:26]
	}
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len("owner:terminal-key")))
	cases := []struct{ got, want string }{
		{ids.of("inv_1"), want(receiptIDPrefix, []byte("inv_1"))},
		{ids.step("inv_1-A"), want(stepIDPrefix, []byte("step\x00"), []byte("inv_1-A"))},
		{ids.rerun("inv_1"), want(rerunIDPrefix, []byte("approved run\x00"), []byte("inv_1"))},
		{ids.idempotent("owner:terminal-key", "k1"), want("inv_", []byte("idempotency key\x00"), n[:], []byte("owner:terminal-key"), []byte("k1"))},
		{ids.idemRequest("inv_x"), want(idemRequestPrefix, []byte("idempotent request\x00"), []byte("inv_x"))},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
	if ids.of("inv_1") == newReceiptIDs("other").of("inv_1") {
		t.Error("two keys derive the same id")
	}
	// Concurrent derivations through the pool agree.
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				if got := ids.of("inv_1"); got != cases[0].want {
					t.Errorf("concurrent: %s", got)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func BenchmarkReceiptID(b *testing.B) {
	ids := newReceiptIDs("salt")
	b.ReportAllocs()
	for b.Loop() {
		ids.of("inv_01m8qe7syftcsx6ce53bj1n1jw")
	}
}

// A receipt's keyed fingerprints are what wire.KeyedFingerprint computes from its
// salt, as the owner checks them, and its plain ones wire.Fingerprint; each
// receipt has a salt of its own.
func TestFingerprintHMACIsKeyedFingerprint(t *testing.T) {
	body, result := "the body", strings.Repeat("the result ", 20) // longer than a hash block
	var fp receiptFingerprints
	fp.compute(body, result)
	h := fp.HMAC
	in, err := wire.KeyedFingerprint(h.Salt, body)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := wire.KeyedFingerprint(h.Salt, result)
	if h.Input != in || h.Output != out || len(h.Salt) != 64 {
		t.Fatalf("fingerprints %+v; want input %s, output %s", h, in, out)
	}
	if fp.Input != wire.Fingerprint(body) || fp.Output != wire.Fingerprint(result) {
		t.Fatalf("plain fingerprints %s, %s; want %s, %s", fp.Input, fp.Output, wire.Fingerprint(body), wire.Fingerprint(result))
	}
	var again receiptFingerprints
	if again.compute(body, result); again.HMAC.Salt == h.Salt {
		t.Fatal("two receipts share a salt")
	}
}

// A receipt's five fingerprints cost two allocations: their hex text and the
// keyed ones' struct (every receipt computes them).
func TestReceiptFingerprintsAllocations(t *testing.T) {
	var fp receiptFingerprints
	if n := allocstest.PerRun(t, 100, func() { fp.compute("the body", "the result") }); n > 2 {
		t.Fatalf("%v allocations per receipt's fingerprints; want at most 2", n)
	}
}
