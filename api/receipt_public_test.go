package api_test

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"hash"
	"regexp"
	"strings"
	"testing"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

// The public views of a receipt (GET /receipt/{id}, ?confirm=) hold nothing a
// stranger can test a guess about the arguments or the result against: not the
// SHA-256 of "Ada" or of the result, nor any hash of them under anything public.
// The owner's view holds the salt that checks the keyed fingerprints, and two calls
// with the same arguments get unrelated ones.
func TestPublicReceiptsCannotTestAGuess(t *testing.T) {
	n := nodetest.Start(t, nil)
	postRow(t, n, `{"key":"GREET","type":"fn","target":"echo","content":"# WHAT: greet\n[\"Hello, $1!\"]"}`)
	var inputs []string
	for range 2 {
		code, got := dispatch(t, n, `{"key":"GREET","body":"Ada"}`)
		if code != 200 || got["result"] != "Hello, Ada!" {
			t.Fatalf("dispatch: %d %v", code, got)
		}
		inv := got["proof"].(map[string]any)["invocation_id"].(string)

		var owner wire.Receipt
		decode(t, mustDo(t, n, 200, "GET", "/api/receipts/"+inv, ""), &owner)
		if owner.HMAC == nil || len(owner.HMAC.Salt) != 64 {
			t.Fatalf("owner view without a salt: %+v", owner.HMAC)
		}
		public := mustDo(t, n, 200, "GET", "/receipt/"+inv, "")
		confirm := mustDo(t, n, 200, "GET", "/api/dispatch?confirm="+inv, "")
		// Everything public a stranger could key a hash with.
		keys := []string{"", inv, owner.Trace, owner.Key, owner.Fingerprints.Contract, owner.Worker, owner.Actor}
		for _, view := range []string{public, confirm} {
			for _, secret := range []string{"Ada", "Hello, Ada!", owner.HMAC.Salt, owner.Fingerprints.Input, owner.Fingerprints.Output} {
				if strings.Contains(view, secret) {
					t.Errorf("a public view holds %q: %s", secret, view)
				}
			}
			for _, h := range regexp.MustCompile(`[0-9a-f]{16,}`).FindAllString(view, -1) {
				for _, guess := range []string{"Ada", "Hello, Ada!"} {
					for _, d := range digests(guess, keys) {
						if strings.HasPrefix(d, h) || strings.HasPrefix(h, d[:16]) {
							t.Errorf("the public %s lets a stranger check %q", h, guess)
						}
					}
				}
			}
		}
		var pub wire.PublicReceipt
		decode(t, public, &pub)
		if pub.Status != "PROVEN_MATERIAL_RESULT" || pub.Fingerprints.Contract != owner.Fingerprints.Contract || pub.HMAC == nil {
			t.Fatalf("public view: %s", public)
		}
		// The owner checks the public keyed fingerprints with the salt.
		if in, _ := wire.KeyedFingerprint(owner.HMAC.Salt, "Ada"); in != pub.HMAC.Input {
			t.Fatal("the public input fingerprint is not HMAC-SHA256(salt, body)")
		}
		if out, _ := wire.KeyedFingerprint(owner.HMAC.Salt, "Hello, Ada!"); out != pub.HMAC.Output {
			t.Fatal("the public output fingerprint is not HMAC-SHA256(salt, result)")
		}
		inputs = append(inputs, pub.HMAC.Input)
	}
	if inputs[0] == inputs[1] {
		t.Fatal("two calls with the same body have the same public input fingerprint")
	}
}

// digests are the hashes of s a stranger could compute: plain, and HMAC keyed with
// each public value.
func digests(s string, keys []string) []string {
	var out []string
	for _, h := range []func() hash.Hash{sha256.New, sha1.New, md5.New, sha512.New} {
		d := h()
		d.Write([]byte(s))
		out = append(out, hex.EncodeToString(d.Sum(nil)))
		for _, k := range keys {
			m := hmac.New(h, []byte(k))
			m.Write([]byte(s))
			out = append(out, hex.EncodeToString(m.Sum(nil)))
			if raw, err := hex.DecodeString(k); err == nil && len(raw) > 0 {
				m := hmac.New(h, raw)
				m.Write([]byte(s))
				out = append(out, hex.EncodeToString(m.Sum(nil)))
			}
		}
	}
	return out
}
