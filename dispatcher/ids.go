package dispatcher

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"hash"
	"strings"
	"sync"

	"github.com/capdir/capdir/eventlog/wire"
)

// receiptIDs derives the event id of an invocation's receipt from its invocation
// id, keyed with a deployment secret. Derived, so a second receipt for the same
// invocation (a redelivered request) carries the same Nats-Msg-Id and is dropped by
// the log's duplicate window. Keyed, so no one without the secret can compute it: a
// bus client that could publish an event under a receipt's id before the engine
// did would make the log drop the real receipt as a duplicate. The event ids of
// steps' requests are derived the same way (step).
type receiptIDs struct {
	key  []byte
	macs *sync.Pool // of *pooledMAC: HMAC-SHA256 keyed with key (three ids per call)
}

// newReceiptIDs keys the ids with salt (ServiceConfig.TagSalt: derived from the
// owner key, so every node of a deployment derives the same ids).
func newReceiptIDs(salt string) receiptIDs {
	h := sha256.Sum256([]byte("capdir receipt event id\x00" + salt))
	key := h[:]
	return receiptIDs{key: key, macs: &sync.Pool{New: func() any { return &pooledMAC{h: hmac.New(sha256.New, key)} }}}
}

// id is prefix and the first 26 base32 characters (130 bits) of the keyed
// HMAC-SHA256 of parts, concatenated.
func (r receiptIDs) id(prefix string, parts ...string) string {
	m := r.macs.Get().(*pooledMAC)
	m.in = m.in[:0]
	for _, p := range parts {
		m.in = append(m.in, p...)
	}
	m.h.Reset()
	m.h.Write(m.in)
	m.sum = m.h.Sum(m.sum[:0])
	var enc [52]byte // base32 of 32 bytes
	idEncoding.Encode(enc[:], m.sum)
	r.macs.Put(m)
	var b strings.Builder
	b.Grow(len(prefix) + 26)
	b.WriteString(prefix)
	b.Write(enc[:26])
	return b.String()
}

// pooledMAC is a keyed HMAC with its input and output buffers, reused.
type pooledMAC struct {
	h       hash.Hash
	in, sum []byte
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
	return r.id(receiptIDPrefix, invocationID)
}

// step is the event id of the request of the step whose invocation id is
// invocationID: step_ and 26 base32 characters of HMAC-SHA256, apart from the
// receipt ids by a prefix in the MAC's input. Derived, so a parent redelivered
// inside the log's duplicate window does not store the step's request twice;
// keyed, because a bus client knows its own invocation ids and so its flow's step
// invocation ids (StepInvocationID): an event it published first under a step's
// request id would make the log drop the request as a duplicate.
func (r receiptIDs) step(invocationID string) string {
	return r.id(stepIDPrefix, "step\x00", invocationID)
}

// rerunIDPrefix starts the event id of an approved call's request (approval.go).
const rerunIDPrefix = "rrun_"

// rerun is the event id of the request capdir appends again for invocationID once
// the owner approved it: rrun_ and 26 base32 characters of an HMAC-SHA256 keyed
// like the receipts' ids, over another domain. The worker admits a held call only
// on a request with this id, which no one without the secret can compute; derived,
// so appending it again inside the log's duplicate window stores nothing.
func (r receiptIDs) rerun(invocationID string) string {
	return r.id(rerunIDPrefix, "approved run\x00", invocationID)
}

// idemRequestPrefix starts the event id of a request sent with an Idempotency-Key.
const idemRequestPrefix = "idem_"

// idempotent is the invocation id of actor's request sent with the Idempotency-Key
// key: InvocationPrefix and 26 base32 characters of an HMAC-SHA256 keyed like the
// receipts' ids, over the actor and the key. Derived, so every node derives the
// same id for the same caller and key; over the actor, so two callers' keys never
// meet; keyed, so no one can compute another caller's id from its key.
func (r receiptIDs) idempotent(actor, key string) string {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(actor)))
	return r.id(wire.InvocationPrefix, "idempotency key\x00", string(n[:]), actor, key)
}

// idemRequest is the event id of the request under the idempotent invocation id
// invocationID: idem_ and 26 base32 characters of an HMAC-SHA256 over another
// domain. Derived, so the same request sent twice inside the log's duplicate
// window is stored once; keyed, so no one can store an event under it first.
func (r receiptIDs) idemRequest(invocationID string) string {
	return r.id(idemRequestPrefix, "idempotent request\x00", invocationID)
}
