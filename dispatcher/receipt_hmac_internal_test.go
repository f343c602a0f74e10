package dispatcher

import (
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
)

// finish keys the input and output fingerprints with a fresh salt per receipt,
// over the whole body and result even when the stored copies are cut.
func TestFinishKeysTheFingerprintsWithASaltPerReceipt(t *testing.T) {
	t0 := time.Date(2026, 7, 26, 4, 36, 19, 0, time.UTC)
	body, result := strings.Repeat("b", 500), strings.Repeat("r", 500)
	var salts []string
	for range 2 {
		d := newDraft(&wire.InvocationRequest{InvocationID: "inv_x", Key: "K", Body: body}, "owner", "w", t0)
		d.Result = result
		rc := d.finish(t0, 0, 100) // both cut to fit
		h := rc.HMAC
		if h == nil || len(h.Salt) != 64 {
			t.Fatalf("keyed fingerprints %+v", h)
		}
		in, _ := wire.KeyedFingerprint(h.Salt, body)
		out, _ := wire.KeyedFingerprint(h.Salt, result)
		if h.Input != in || h.Output != out {
			t.Fatal("the keyed fingerprints must cover the whole input and output")
		}
		if h.Input == Fingerprint(body) || h.Output == Fingerprint(result) {
			t.Fatal("a keyed fingerprint equals the plain one")
		}
		salts = append(salts, h.Salt)
	}
	if salts[0] == salts[1] {
		t.Fatal("two receipts share a salt")
	}
}
