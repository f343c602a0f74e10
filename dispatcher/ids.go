package dispatcher

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
)

// receiptIDs derives the event id of an invocation's receipt from its invocation
// id, keyed with a deployment secret. Derived, so a second receipt for the same
// invocation (a redelivered request) carries the same Nats-Msg-Id and is dropped by
// the log's duplicate window. Keyed, so no one without the secret can compute it: a
// bus client that could publish an event under a receipt's id before the engine
// did would make the log drop the real receipt as a duplicate.
type receiptIDs struct{ key []byte }

// newReceiptIDs keys the ids with salt (ServiceConfig.TagSalt: derived from the
// owner key, so every node of a deployment derives the same ids).
func newReceiptIDs(salt string) receiptIDs {
	h := sha256.Sum256([]byte("capdir receipt event id\x00" + salt))
	return receiptIDs{key: h[:]}
}

// receiptIDPrefix starts every receipt event id.
const receiptIDPrefix = "rcpt_"

var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// of is the receipt event id of invocationID: rcpt_ and 26 base32 characters (130
// bits) of HMAC-SHA256.
func (r receiptIDs) of(invocationID string) string {
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte(invocationID))
	return receiptIDPrefix + idEncoding.EncodeToString(m.Sum(nil))[:26]
}
