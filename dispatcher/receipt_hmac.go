package dispatcher

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/capdir/capdir/eventlog/wire"
)

// fingerprintHMAC is a receipt's keyed fingerprints of the whole body and result,
// under a salt of 32 bytes from crypto/rand drawn for this receipt alone (a secret:
// it is never derived from anything public). It is stored in the receipt, so a
// replay folds the same values.
func fingerprintHMAC(body, result string) *wire.FingerprintHMAC {
	key := make([]byte, 32)
	rand.Read(key) // never fails: crypto/rand crashes the program rather than return an error
	salt := hex.EncodeToString(key)
	in, _ := wire.KeyedFingerprint(salt, body) // cannot fail: salt is 32 bytes of hex
	out, _ := wire.KeyedFingerprint(salt, result)
	return &wire.FingerprintHMAC{Salt: salt, Input: in, Output: out}
}
