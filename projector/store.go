package projector

import (
	"encoding/binary"

	bolt "go.etcd.io/bbolt"
)

// Buckets of the projection file.
var (
	bucketMeta        = []byte("meta")         // "ckpt/<stream>" -> seq
	bucketRows        = []byte("rows")         // key -> row JSON
	bucketDirSeq      = []byte("dirseq")       // key -> seq of the key's last mutation (kept after delete)
	bucketInvocations = []byte("invocations")  // invocation id -> its first request (invocations.go)
	bucketReceipts    = []byte("receipts")     // invocation id -> receipt, stored compactly (receipt_store.go)
	bucketByKey       = []byte("receipts_key") // key 0x00 seq [part] -> the receipt's ledger leaf (a uvarint; the invocation id in the ledger's first layout)
	bucketBreakers    = []byte("breakers")     // key -> breaker.State JSON
	bucketRevoked     = []byte("revoked")      // token id -> exp (Unix seconds), see revoked.go
	// Approvals (approvals.go): invocation id -> Approval JSON; the undecided ones;
	// decision time 0x.. invocation id, in time order.
	bucketApprovals        = []byte("approvals")
	bucketApprovalsPending = []byte("approvals_pending")
	bucketApprovalsDecided = []byte("approvals_decided")
	bucketUpstreams        = []byte("upstreams") // upstream name -> Upstream JSON, see upstreams.go
)

var allBuckets = [][]byte{bucketMeta, bucketRows, bucketDirSeq, bucketInvocations, bucketReceipts, bucketByKey, bucketBreakers, bucketRevoked,
	bucketApprovals, bucketApprovalsPending, bucketApprovalsDecided, bucketLedgerHashes, bucketLedgerLeaves, bucketUpstreams,
	bucketSnapshots, bucketSnapDirty, bucketNodeKeys}

// bucketStreams records, per stream, the creation time (RFC 3339) of the stream the
// projection folded (logcheck.go). It says which log the projection came from, not
// what the log holds, so it stays out of allBuckets and the digest: a projection
// and its replay from a restored copy of the log digest alike.
var bucketStreams = []byte("streams")

// appendBuckets are keyed by time-ordered ids (ULID invocation ids), by
// increasing indexes (the ledger's) or by a row key and an increasing sequence
// (receipts_key: each key's new entries land at the end of its run), so new keys
// land at the end: pages filled
// close to full instead of split in half keep the file small and the writes few
// (the ledger's buckets so filled: 95 MB down to 68 MB for BenchmarkReplay's
// 100k events). bbolt does not store FillPercent; it is set on the bucket handle
// in every write transaction.
var appendBuckets = [][]byte{bucketInvocations, bucketReceipts, bucketByKey, bucketLedgerHashes, bucketLedgerLeaves}

const appendFillPercent = 1.0

func setFill(tx *bolt.Tx) {
	for _, b := range appendBuckets {
		tx.Bucket(b).FillPercent = appendFillPercent
	}
}

func checkpointKey(stream string) []byte { return []byte("ckpt/" + stream) }

func u64(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

func readU64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// leafValue is a leaf index as the by-key index stores it.
func leafValue(leaf int64) []byte { return binary.AppendUvarint(nil, uint64(leaf)) }

// readLeafValue is leafValue's inverse; ok is false when v is not one.
func readLeafValue(v []byte) (leaf int64, ok bool) {
	x, n := binary.Uvarint(v)
	if n <= 0 || n != len(v) || x > 1<<62 {
		return 0, false
	}
	return int64(x), true
}

// byKeyKey is the by-key index's key of a receipt of key at data-stream
// sequence seq, the part-th event of its message: key, 0, seq; a receipt after
// the first of a pack (eventlog.Stored.Part) is told apart by its part after
// the sequence, two bytes, so the index keeps the log's order.
func byKeyKey(key string, seq uint64, part int) []byte {
	return appendByKeyKey(make([]byte, 0, len(key)+11), key, seq, part)
}

// appendByKeyKey appends byKeyKey(key, seq, part) to b.
func appendByKeyKey(b []byte, key string, seq uint64, part int) []byte {
	b = append(b, key...)
	b = append(b, 0)
	b = binary.BigEndian.AppendUint64(b, seq)
	if part > 0 {
		b = binary.BigEndian.AppendUint16(b, uint16(part))
	}
	return b
}
