package projector

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"sync"

	"github.com/klauspost/compress/s2"
	bolt "go.etcd.io/bbolt"
)

// How the receipts bucket stores a receipt. The log holds a receipt as the JSON
// the engine appended, and that byte string is what every read gives back: the
// API's answers decode it, and the ledger hashes it as its leaf. The projection
// stores it compactly and losslessly: every run of lowercase hex digits of 32 or
// more (the fingerprints, the salt, the keyed fingerprints) packed into bytes,
// then the whole compressed with S2 against a fixed dictionary of a receipt's
// field names and usual values. A fold of 30,000 fn receipts stores about a
// quarter of their bytes.
//
// A stored value that starts with receiptCompact is so encoded; any other value
// (but the never-JSON case of receiptAsIs) is the receipt's JSON as it was appended (what versions before this encoding
// stored, and what this one stores when packing gains nothing): JSON never starts
// with that byte, so a file an older version wrote reads as it is, and one with
// both kinds reads too. The dictionary belongs to the format byte: a later
// dictionary takes a new byte, and this one stays readable.

// receiptCompact starts a receipt stored packed and compressed (receiptDictV1);
// receiptAsIs one stored as it is that itself starts with one of these bytes.
// receiptLeaf starts a receipt stored with the index of its ledger leaf: the
// byte, the index as a uvarint, then the receipt in one of the forms above
// (the ledger's way from an invocation id to its leaf, ledger.go).
// receiptKeyed starts one packed and compressed as receiptCompact is, with the
// first occurrence of its invocation id (the key it is stored under, which a
// receipt's JSON starts with) packed as keyRef.
const (
	receiptCompact = 0x02
	receiptAsIs    = 0x03
	receiptLeaf    = 0x04
	receiptKeyed   = 0x05
)

// keyRef stands, in a receiptKeyed receipt's packed form, for the key it is
// stored under: like hexRun, a byte valid JSON never holds.
const keyRef = 0x00

// minKeyRef is the shortest key packed as keyRef.
const minKeyRef = 8

// hexRun starts a packed run of hex digits: the byte, the run's length in bytes
// (1..255), then the bytes. Valid JSON holds no raw byte below 0x20 but tab,
// line feed and carriage return, so it never holds this one.
const hexRun = 0x01

// minHexRun is the shortest run of hex digits packed: shorter ones (the digits of
// a timestamp, a number) are left as they are.
const minHexRun = 32

// receiptDictV1 is the S2 dictionary of receiptCompact: never to be changed.
var receiptDictV1 = s2.NewDict(append([]byte{0}, receiptDictV1Text...))

// receiptDictV1Text is the dictionary's text: a receipt's fields in the order the
// engine writes them (each fingerprint packed, hexRun and 32), then values.
const receiptDictV1Text = `{"invocation_id":"inv_01","trace":"t_","actor":"owner:terminal-key","key":"","type":"fn","runner":"fn","ok":true,"ran":true,"material":true,"status":"PROVEN_MATERIAL_RESULT","started_at":"2026-12-01T00:00:00.000000000Z","finished_at":"2026-12-01T00:00:00.000000000Z","duration_ms":0.0,"cost_usd":0,"fingerprints":{"input":"` +
	"\x01\x20" + `","output":"` + "\x01\x20" + `","contract":"` + "\x01\x20" + `"},"body":"","result":"","fingerprint_hmac":{"salt":"` + "\x01\x20" + `","input":"` + "\x01\x20" + `","output":"` + "\x01\x20" + `"},"extra":{},"parent":"inv_","children":["inv_"],"prompt_tokens":0,"completion_tokens":0,"cred_tag":"","breaker_generation":0,"breaker_kind":"not_counted","worker":"","contract_seq":1}` +
	`"http","nats","agent","flow","mcp","ok":false,"ran":false,"material":false,"status":"RAN_WITH_ERROR","FAILED_BEFORE_RUN","SHAPE_ONLY","REFUSED_UNKNOWN_KEY","REFUSED_BREAKER_OPEN","REFUSED_TOKEN","REFUSED_SCOPE","REFUSED_INPUT","breaker_kind":"upstream_other","actor":"token:","actor":"nats:","result":"ERR:`

// errReceiptEncoding is a stored receipt that does not decode.
var errReceiptEncoding = errors.New("projector: a stored receipt does not decode")

// maxStoredReceipt bounds a stored receipt's decoded length: no receipt is
// larger than the largest NATS message (64 MiB).
const maxStoredReceipt = 64 << 20

// encodeReceipt is the stored form of a receipt's data (see above).
func encodeReceipt(data []byte) []byte { return encodeReceiptFor(nil, data) }

// encodeReceiptFor is the stored form of the receipt data stored under the key
// inv: receiptKeyed when data holds inv, receiptCompact when it does not.
func encodeReceiptFor(inv, data []byte) []byte { return appendReceipt(nil, inv, data, 0) }

// packedPool holds the buffers a receipt is packed into before it is
// compressed: the packed form is not kept.
var packedPool = sync.Pool{New: func() any { return new([]byte) }}

// appendReceipt appends to dst the stored form of the receipt data stored under
// the key inv (encodeReceiptFor), in one allocation with room for spare more
// bytes after it (a checksum).
func appendReceipt(dst, inv, data []byte, spare int) []byte {
	buf := packedPool.Get().(*[]byte)
	defer packedPool.Put(buf)
	format := byte(receiptCompact)
	i := -1
	if len(inv) >= minKeyRef {
		i = bytes.Index(data, inv)
	}
	var packed []byte
	var ok bool
	if i < 0 {
		packed, ok = packHexTo((*buf)[:0], data)
	} else {
		// One pass over data: the parts around the key are packed, and data is
		// JSON-like (ok) when they and the key are.
		format = receiptKeyed
		if packed, ok = packHexTo((*buf)[:0], data[:i]); ok {
			packed = append(packed, keyRef)
			packed, ok = packHexTo(packed, data[i+len(inv):])
		}
		ok = ok && !hasControlByte(inv)
	}
	if ok && cap(packed) <= 64<<10 {
		*buf = packed
	}
	if !ok {
		return append(dst, asIs(data)...)
	}
	need := len(dst) + 1 + s2.MaxEncodedLen(len(packed)) + spare
	if cap(dst) < need {
		dst = append(make([]byte, 0, need), dst...)
	}
	m := len(dst)
	dst = append(dst, format)
	n := len(receiptDictV1.Encode(dst[m+1:cap(dst)-spare], packed))
	if 1+n >= len(data) {
		return append(dst[:m], asIs(data)...)
	}
	return dst[:m+1+n]
}

// asIs is data stored as it is: behind receiptAsIs when it starts with a format
// byte (never JSON), else bare.
func asIs(data []byte) []byte {
	if len(data) > 0 && (data[0] == receiptCompact || data[0] == receiptAsIs || data[0] == receiptLeaf || data[0] == receiptKeyed) {
		return append([]byte{receiptAsIs}, data...)
	}
	return data
}

// decodeReceipt is the receipt's data from its stored form, as stored under no
// key.
func decodeReceipt(v []byte) ([]byte, error) { return decodeReceiptFor(nil, v) }

// decodeReceiptFor is the receipt's data from its stored form under the key inv.
func decodeReceiptFor(inv, v []byte) ([]byte, error) {
	if _, rest, ok, err := splitLeaf(v); err != nil {
		return nil, err
	} else if ok {
		v = rest
	}
	switch {
	case len(v) > 0 && v[0] == receiptAsIs:
		return v[1:], nil
	case len(v) == 0 || v[0] != receiptCompact && v[0] != receiptKeyed:
		return v, nil
	case v[0] == receiptKeyed && len(inv) < minKeyRef:
		return nil, errReceiptEncoding
	}
	// The length the block claims is allocated before anything is checked: a
	// damaged one must not ask for more than a receipt can be.
	if n, err := s2.DecodedLen(v[1:]); err != nil || n > maxStoredReceipt {
		return nil, errReceiptEncoding
	}
	packed, err := receiptDictV1.Decode(nil, v[1:])
	if err != nil {
		return nil, errReceiptEncoding
	}
	if v[0] == receiptCompact {
		return unpackHex(packed)
	}
	i := keyRefAt(packed)
	if i < 0 {
		return nil, errReceiptEncoding
	}
	a, err := unpackHex(packed[:i])
	if err != nil {
		return nil, err
	}
	b, err := unpackHex(packed[i+1:])
	if err != nil {
		return nil, err
	}
	return append(append(a, inv...), b...), nil
}

// keyRefAt is the offset of the keyRef in a receiptKeyed receipt's packed form,
// past the bytes of its packed runs (which may hold that byte): -1 when there
// is none.
func keyRefAt(packed []byte) int {
	for i := 0; i < len(packed); i++ {
		switch packed[i] {
		case keyRef:
			return i
		case hexRun:
			if i+1 >= len(packed) {
				return -1
			}
			i += 1 + int(packed[i+1])
		}
	}
	return -1
}

// packHex replaces every run of minHexRun or more lowercase hex digits of data
// with hexRun, its length in bytes and the bytes (an odd digit at a run's end is
// left as it is). It reports false, and packs nothing, when data holds a byte
// below 0x20 other than tab, line feed or carriage return: what is not JSON is
// stored as it is.
func packHex(data []byte) ([]byte, bool) { return packHexTo(make([]byte, 0, len(data)), data) }

// packHexTo is packHex appending to out.
func packHexTo(out, data []byte) ([]byte, bool) {
	from := 0 // data[from:i] is copied as it is when the next run is packed
	for i := 0; i < len(data); {
		switch byteClass[data[i]] {
		case plainByte:
			i++
			continue
		case controlByte:
			return nil, false
		}
		j := i + 1
		for j < len(data) && byteClass[data[j]] == hexDigit {
			j++
		}
		if j-i < minHexRun {
			i = j
			continue
		}
		out = append(out, data[from:i]...)
		for j-i >= 2 {
			n := min((j-i)/2, 255)
			out = append(out, hexRun, byte(n))
			for k := i; k < i+2*n; k += 2 {
				out = append(out, hexValue[data[k]]<<4|hexValue[data[k+1]])
			}
			i += 2 * n
		}
		from = i // an odd digit left at the run's end is copied as it is
	}
	return append(out, data[from:]...), true
}

// hasControlByte reports whether b holds a byte packHex refuses.
func hasControlByte(b []byte) bool {
	for _, c := range b {
		if byteClass[c] == controlByte {
			return true
		}
	}
	return false
}

// byteClass sorts bytes for packHex: a lowercase hex digit, a control byte JSON
// cannot hold unescaped (below 0x20 but tab, line feed and carriage return), or
// any other.
var byteClass = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case isLowerHex(byte(c)):
			t[c] = hexDigit
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r':
			t[c] = controlByte
		}
	}
	return t
}()

const (
	plainByte = iota
	hexDigit
	controlByte
)

// hexValue is a lowercase hex digit's value.
var hexValue = func() (t [256]byte) {
	for c := range 256 {
		switch {
		case '0' <= c && c <= '9':
			t[c] = byte(c - '0')
		case 'a' <= c && c <= 'f':
			t[c] = byte(c - 'a' + 10)
		}
	}
	return t
}()

// unpackHex is packHex's inverse.
func unpackHex(packed []byte) ([]byte, error) {
	out := make([]byte, 0, 2*len(packed))
	for {
		j := bytes.IndexByte(packed, hexRun)
		if j < 0 {
			return append(out, packed...), nil
		}
		out = append(out, packed[:j]...)
		packed = packed[j:]
		if len(packed) < 2 {
			return nil, errReceiptEncoding
		}
		n := int(packed[1])
		if n == 0 || 2+n > len(packed) {
			return nil, errReceiptEncoding
		}
		out = hex.AppendEncode(out, packed[2:2+n])
		packed = packed[2+n:]
	}
}

func isLowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

// withLeaf is a receipt's stored form enc behind the index of its ledger leaf.
func withLeaf(leaf int64, enc []byte) []byte {
	v := make([]byte, 0, 1+binary.MaxVarintLen64+len(enc))
	v = append(v, receiptLeaf)
	v = binary.AppendUvarint(v, uint64(leaf))
	return append(v, enc...)
}

// splitLeaf reads the leaf index a stored receipt starts with: ok is false when
// it starts with none (a receipt an older version stored), and rest is the
// receipt's stored form after it.
func splitLeaf(v []byte) (leaf int64, rest []byte, ok bool, err error) {
	if len(v) == 0 || v[0] != receiptLeaf {
		return 0, v, false, nil
	}
	x, n := binary.Uvarint(v[1:])
	if n <= 0 || x > 1<<62 || len(v) > 1+n && v[1+n] == receiptLeaf {
		return 0, nil, false, errReceiptEncoding
	}
	return int64(x), v[1+n:], true, nil
}

// putReceipt stores the receipt data of invocation inv, the ledger's leaf leaf:
// its stored form and checksum written into one slice values hands out (a
// fresh one when values is nil), which bbolt keeps until the commit.
func putReceipt(tx *bolt.Tx, values *arena, inv, data []byte, leaf int64) error {
	v := values.take(receiptRoom + 1 + s2.MaxEncodedLen(len(data)) + sumLen)
	v = append(v, receiptLeaf)
	v = binary.AppendUvarint(v, uint64(leaf))
	v = appendReceipt(v, inv, data, sumLen)
	v = binary.BigEndian.AppendUint64(v, valueSum(inv, v))
	return tx.Bucket(bucketReceipts).Put(inv, v)
}

// receiptLeafIndex is the ledger leaf of invocation inv's receipt: ok is false
// when none is folded.
func receiptLeafIndex(tx *bolt.Tx, inv []byte) (leaf int64, ok bool, err error) {
	v, err := get(tx, bucketReceipts, inv)
	if err != nil || v == nil {
		return 0, false, err
	}
	leaf, _, ok, err = splitLeaf(v)
	if err != nil {
		return 0, false, &valueError{bucket: string(bucketReceipts), key: string(inv)}
	}
	return leaf, ok, nil
}

// getReceipt is the receipt data of invocation inv as the log holds it: nil when
// none is folded, a *valueError when the stored value fails its checksum.
func getReceipt(tx *bolt.Tx, inv []byte) ([]byte, error) {
	v, err := get(tx, bucketReceipts, inv)
	if err != nil || v == nil {
		return v, err
	}
	return receiptData(inv, v)
}

// receiptData decodes a stored receipt read under inv; one that does not decode
// is damage, as a checksum that does not match is.
func receiptData(inv, v []byte) ([]byte, error) {
	data, err := decodeReceiptFor(inv, v)
	if err != nil {
		return nil, &valueError{bucket: string(bucketReceipts), key: string(inv)}
	}
	return data, nil
}
