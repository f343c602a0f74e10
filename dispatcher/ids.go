package dispatcher

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"

	"github.com/capdir/capdir/eventlog/wire"
)

// receiptIDs derives the event id of an invocation's receipt from its invocation
// id, keyed with a deployment secret. Derived, so a second receipt for the same
// invocation (a redelivered request) carries the same Nats-Msg-Id and is dropped by
// the log's duplicate window. Keyed, so no one without the secret can compute it: a
// bus client that could publish an event under a receipt's id before the engine
// did would make the log drop the real receipt as a duplicate. The event ids of
// steps' requests are derived the same way (step).
type receiptIDs struct{ key []byte }

// newReceiptIDs keys the ids with salt (ServiceConfig.TagSalt: derived from the
// owner key, so every node of a deployment derives the same ids).
func newReceiptIDs(salt string) receiptIDs {
	h := sha256.Sum256([]byte("capdir receipt event id\x00" + salt))
	return receiptIDs{key: h[:]}
}

// receiptIDPrefix starts every receipt event id, stepIDPrefix every step
// request's.
const (
	receiptIDPrefix = "rcpt_"
	stepIDPrefix    = "step_"
)

var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// of is the receipt event id of invocationID: rcpt_ and 26 base32 characters (130
// bits) of HMAC-SHA256.
func (r receiptIDs) of(invocationID string) string {
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte(invocationID))
	return receiptIDPrefix + idEncoding.EncodeToString(m.Sum(nil))[:26]
}

// step is the event id of the request of the step whose invocation id is
// invocationID: step_ and 26 base32 characters of HMAC-SHA256, apart from the
// receipt ids by a prefix in the MAC's input. Derived, so a parent redelivered
// inside the log's duplicate window does not store the step's request twice;
// keyed, because a bus client knows its own invocation ids and so its flow's step
// invocation ids (StepInvocationID): an event it published first under a step's
// request id would make the log drop the request as a duplicate.
func (r receiptIDs) step(invocationID string) string {
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte("step\x00"))
	m.Write([]byte(invocationID))
	return stepIDPrefix + idEncoding.EncodeToString(m.Sum(nil))[:26]
}

// rerunIDPrefix starts the event id of an approved call's request (approval.go).
const rerunIDPrefix = "rrun_"

// rerun is the event id of the request capdir appends again for invocationID once
// the owner approved it: rrun_ and 26 base32 characters of an HMAC-SHA256 keyed
// like the receipts' ids, over another domain. The worker admits a held call only
// on a request with this id, which no one without the secret can compute; derived,
// so appending it again inside the log's duplicate window stores nothing.
func (r receiptIDs) rerun(invocationID string) string {
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte("approved run\x00"))
	m.Write([]byte(invocationID))
	return rerunIDPrefix + idEncoding.EncodeToString(m.Sum(nil))[:26]
}

// idemRequestPrefix starts the event id of a request sent with an Idempotency-Key.
const idemRequestPrefix = "idem_"

// idempotent is the invocation id of actor's request sent with the Idempotency-Key
// key: InvocationPrefix and 26 base32 characters of an HMAC-SHA256 keyed like the
// receipts' ids, over the actor and the key. Derived, so every node derives the
// same id for the same caller and key; over the actor, so two callers' keys never
// meet; keyed, so no one can compute another caller's id from its key.
func (r receiptIDs) idempotent(actor, key string) string {
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte("idempotency key\x00"))
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(actor)))
	m.Write(n[:])
	m.Write([]byte(actor))
	m.Write([]byte(key))
	return wire.InvocationPrefix + idEncoding.EncodeToString(m.Sum(nil))[:26]
}

// idemRequest is the event id of the request under the idempotent invocation id
// invocationID: idem_ and 26 base32 characters of an HMAC-SHA256 over another
// domain. Derived, so the same request sent twice inside the log's duplicate
// window is stored once; keyed, so no one can store an event under it first.
func (r receiptIDs) idemRequest(invocationID string) string {
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte("idempotent request\x00"))
	m.Write([]byte(invocationID))
	return idemRequestPrefix + idEncoding.EncodeToString(m.Sum(nil))[:26]
}
