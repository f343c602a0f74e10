package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
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

// PublicReceipt is the view of a receipt anyone may see, keyless: what ran (the
// key, its type and runner), when, how it ended, under which contract, and the
// input and output fingerprints only keyed (FingerprintHMAC without its salt).
// Nothing in it lets a reader test a guess about the arguments or the result, and
// nothing names the caller: not the actor (token:<sub>, nats:<client>), not the
// trace the caller's call carried; the owner's view keeps both. A receipt written
// before keyed fingerprints existed shows the contract fingerprint alone. Its
// fields are listed here one by one, so that a field added to the receipt is not
// public unless it is added here.
type PublicReceipt struct {
	InvocationID string             `json:"invocation_id"`
	Key          string             `json:"key"`
	Type         string             `json:"type,omitempty"`
	Runner       string             `json:"runner,omitempty"`
	OK           bool               `json:"ok"`
	Ran          bool               `json:"ran"`
	Material     bool               `json:"material"`
	Status       string             `json:"status"`
	Upstream     int                `json:"upstream_status,omitempty"`
	StartedAt    time.Time          `json:"started_at"`
	FinishedAt   time.Time          `json:"finished_at"`
	DurationMS   float64            `json:"duration_ms"`
	CostUSD      float64            `json:"cost_usd"`
	Fingerprints PublicFingerprints `json:"fingerprints"`
	HMAC         *FingerprintHMAC   `json:"fingerprint_hmac,omitempty"`
}

// PublicFingerprints are the fingerprints a public view shows in the clear.
type PublicFingerprints struct {
	Contract string `json:"contract"`
}

// Public is rc's public view.
func (rc *Receipt) Public() PublicReceipt {
	p := PublicReceipt{
		InvocationID: rc.InvocationID, Key: rc.Key, Type: rc.Type, Runner: rc.Runner,
		OK: rc.OK, Ran: rc.Ran, Material: rc.Material, Status: rc.Status, Upstream: rc.Upstream,
		StartedAt: rc.StartedAt, FinishedAt: rc.FinishedAt, DurationMS: rc.DurationMS, CostUSD: rc.CostUSD,
		Fingerprints: PublicFingerprints{Contract: rc.Fingerprints.Contract},
	}
	if rc.HMAC != nil {
		p.HMAC = &FingerprintHMAC{Input: rc.HMAC.Input, Output: rc.HMAC.Output}
	}
	return p
}
