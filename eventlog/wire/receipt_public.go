package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/capdir/capdir/receipt"
)

// FingerprintHMAC, PublicReceipt and PublicFingerprints are declared in
// package receipt with Receipt.
type (
	FingerprintHMAC    = receipt.FingerprintHMAC
	PublicReceipt      = receipt.PublicReceipt
	PublicFingerprints = receipt.PublicFingerprints
)

// KeyedFingerprint is the hex HMAC-SHA256 of s keyed with the hex salt: what a
// receipt's FingerprintHMAC holds for its input and output. The same as
//
//	printf '%s' "$s" | openssl dgst -sha256 -mac HMAC -macopt hexkey:"$salt"
func KeyedFingerprint(salt, s string) (string, error) {
	key, err := hex.DecodeString(salt)
	if err != nil || len(key) == 0 {
		return "", fmt.Errorf("wire: the salt must be the receipt's fingerprint_hmac.salt, hex digits; got %q", salt)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return hex.EncodeToString(m.Sum(nil)), nil
}
