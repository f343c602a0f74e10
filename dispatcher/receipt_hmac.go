package dispatcher

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io"

	"github.com/capdir/capdir/eventlog/wire"
)

// fingerprintHMAC is a receipt's keyed fingerprints of the whole body and result,
// under a salt of 32 bytes from crypto/rand drawn for this receipt alone (a secret:
// it is never derived from anything public). It is stored in the receipt, so a
// replay folds the same values. Each is wire.KeyedFingerprint(salt, …), computed
// with one keyed MAC for both.
func fingerprintHMAC(body, result string) *wire.FingerprintHMAC {
	var key [32]byte
	rand.Read(key[:]) // never fails: crypto/rand crashes the program rather than return an error
	m := hmac.New(sha256.New, key[:])
	var sum [sha256.Size]byte
	io.WriteString(m, body)
	in := hex.EncodeToString(m.Sum(sum[:0]))
	m.Reset()
	io.WriteString(m, result)
	out := hex.EncodeToString(m.Sum(sum[:0]))
	return &wire.FingerprintHMAC{Salt: hex.EncodeToString(key[:]), Input: in, Output: out}
}
