package projector

import (
	"sync"

	"github.com/klauspost/compress/s2"
)

// receiptScratch holds the buffers encoding a receipt needs, reused from one
// receipt to the next: the packed text and the compressed block. What encode
// returns is only valid until the next call.
type receiptScratch struct {
	packed, block []byte
}

// receiptScratches are the scratches of the fold's receipts: a fold stores
// thousands of receipts a second, each of whose values put copies anyway.
var receiptScratches = sync.Pool{New: func() any { return new(receiptScratch) }}

// maxScratch bounds the buffers a scratch keeps: a huge receipt's are dropped.
const maxScratch = 64 << 10

// encode is the stored form of data (see encodeReceipt), in sc's buffers or data
// itself.
func (sc *receiptScratch) encode(data []byte) []byte {
	packed, ok := appendPackHex(sc.packed[:0], data)
	if !ok {
		return asIs(data)
	}
	need := 1 + s2.MaxEncodedLen(len(packed))
	if cap(sc.block) < need {
		sc.block = make([]byte, need)
	}
	out := sc.block[:need]
	out[0] = receiptCompact
	n := len(receiptDictV1.Encode(out[1:], packed))
	if cap(packed) <= maxScratch {
		sc.packed = packed
	}
	if cap(sc.block) > maxScratch {
		sc.block = nil
	}
	if 1+n >= len(data) {
		return asIs(data)
	}
	return out[:1+n]
}

// putReceipt stores the receipt data of invocation inv as putReceipt does, the
// stored value carved from the batch's arena (ledgerBatch.put) and encoded in a
// pooled scratch.
func (f *folder) putReceipt(inv, data []byte) error {
	sc := receiptScratches.Get().(*receiptScratch)
	defer receiptScratches.Put(sc)
	return f.ledger.put(bucketReceipts, inv, sc.encode(data))
}
