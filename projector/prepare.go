package projector

import (
	"encoding/binary"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/klauspost/compress/s2"
	"golang.org/x/mod/sumdb/tlog"
)

// prepared is the part of folding one event that depends on the event alone: its
// subject parsed, its data decoded and checked, and for a receipt its stored form
// and its ledger leaf's hash. A catch-up prepares a batch on its own goroutine
// while the batch before it folds (catchup.go); the fold then does what depends on
// the projection (does the receipt exist, which leaf is next, the puts). What the
// fold stores is what it stores unprepared: prepare calls the same checks and
// encoders the fold calls.
type prepared struct {
	subj wire.Subject
	// kind says which of receipt and request is prepared (none, for any other
	// event): they are held by value, so a batch's are one allocation.
	kind    preparedKind
	receipt preparedReceipt
	request preparedRequest
}

type preparedKind uint8

const (
	preparedNone preparedKind = iota
	preparedReceiptKind
	preparedRequestKind
)

type preparedReceipt struct {
	head receiptHead
	err  error
	hash tlog.Hash // tlog.RecordHash of the receipt data: its ledger leaf's hash
	// value is the receipt's stored value (putReceipt) from byte receiptRoom on,
	// with room for its checksum: the leaf's index goes before it once known.
	value []byte
}

type preparedRequest struct {
	head requestHead
	err  error
	// value is invocationValue for head, the request's id as it names it (not
	// scoped to its client).
	value []byte
}

// receiptRoom is the room a prepared receipt value keeps before the receipt's
// stored form, for its format byte and its leaf index.
const receiptRoom = 1 + binary.MaxVarintLen64

// prepare prepares every event of batch; out[i] is batch[i]'s. The values it
// builds for bbolt come from values, when not nil.
func prepare(batch []eventlog.Stored, out []prepared, values *arena) {
	for i := range batch {
		prepareOne(&batch[i], &out[i], values)
	}
}

func prepareOne(s *eventlog.Stored, p *prepared, values *arena) {
	p.subj = wire.ParseSubject(s.Subject)
	if s.Invalid != "" {
		return
	}
	switch s.Type {
	case wire.TypeReceipt:
		if p.subj.Family != wire.ReceiptFamily {
			return
		}
		p.kind = preparedReceiptKind
		r := &p.receipt
		r.head, r.err = checkReceipt(s, p.subj)
		if r.err == nil {
			r.hash = tlog.RecordHash(s.Data)
			v := values.take(receiptRoom + 1 + s2.MaxEncodedLen(len(s.Data)) + sumLen)[:receiptRoom]
			r.value = appendReceipt(v, []byte(r.head.InvocationID), s.Data, sumLen)
		}
	case wire.TypeInvocationRequested:
		p.kind = preparedRequestKind
		r := &p.request
		r.head, r.err = checkRequest(s, p.subj)
		if r.err == nil {
			r.value = invocationValue(values, s, p.subj, &r.head)
		}
	}
}

// putPreparedReceipt is putReceipt for a prepared receipt value (r.value).
func putPreparedReceipt(f *folder, r *preparedReceipt, leaf int64) error {
	var head [receiptRoom]byte
	h := append(head[:0], receiptLeaf)
	h = binary.AppendUvarint(h, uint64(leaf))
	v := r.value[receiptRoom-len(h):]
	copy(v, h)
	inv := f.ledger.stringKey(r.head.InvocationID)
	v = binary.BigEndian.AppendUint64(v, valueSum(inv, v))
	return f.tx.Bucket(bucketReceipts).Put(inv, v)
}
