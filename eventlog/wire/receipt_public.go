package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// FingerprintHMAC holds a receipt's keyed fingerprints of its input and output:
// the hex HMAC-SHA256 of the whole input (the body) and of the whole output (the
// result), keyed with Salt, 32 random bytes the engine draws for this receipt. The
// public view of a receipt shows Input and Output without Salt: without the salt
// nobody can test a guess about the arguments or the result against them, and two
// calls with the same arguments get unrelated values. With the salt, which the
// owner's view shows, anyone can check a claim about them (see KeyedFingerprint).
type FingerprintHMAC struct {
	Salt   string `json:"salt,omitempty"` // hex; the owner's view only
	Input  string `json:"input"`
	Output string `json:"output"`
}

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

// PublicReceipt is the view of a receipt anyone may see, keyless: its summary with
// the contract fingerprint, and the input and output fingerprints only keyed
// (FingerprintHMAC without its salt). Nothing in it lets a reader test a guess about
// the arguments or the result. A receipt written before keyed fingerprints existed
// shows the contract fingerprint alone.
type PublicReceipt struct {
	ReceiptSummary
	// Fingerprints replaces the summary's: the contract's only.
	Fingerprints PublicFingerprints `json:"fingerprints"`
	HMAC         *FingerprintHMAC   `json:"fingerprint_hmac,omitempty"`
}

// PublicFingerprints are the fingerprints a public view shows in the clear.
type PublicFingerprints struct {
	Contract string `json:"contract"`
}

// Public is rc's public view.
func (rc *Receipt) Public() PublicReceipt {
	p := PublicReceipt{ReceiptSummary: rc.ReceiptSummary, Fingerprints: PublicFingerprints{Contract: rc.Fingerprints.Contract}}
	p.ReceiptSummary.Fingerprints = Fingerprints{}
	if rc.HMAC != nil {
		p.HMAC = &FingerprintHMAC{Input: rc.HMAC.Input, Output: rc.HMAC.Output}
	}
	return p
}
