package dispatcher

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"sync"
	"unsafe"

	"github.com/capdir/capdir/eventlog/wire"
)

// receiptFingerprints are a receipt's fingerprints of the whole body and result:
// plain (wire.Fingerprint) and keyed (HMAC), the keyed ones under a salt of 32
// bytes from crypto/rand drawn for this receipt alone (a secret: it is never
// derived from anything public), each wire.KeyedFingerprint(salt, …). They are
// stored in the receipt, so a replay folds the same values. Computed on every
// receipt, so cheaply: the HMACs by hand (RFC 2104) over a pooled hash, since the
// key is new each time, and the five hex strings cut from one allocation.
type receiptFingerprints struct {
	Input, Output string
	HMAC          *wire.FingerprintHMAC
}

// fingerprinter is a hash and the scratch space of one computation, pooled: a
// hash reached through an interface makes whatever it reads escape.
type fingerprinter struct {
	h          hash.Hash
	ipad, opad [sha256.BlockSize]byte
	key        [32]byte
	sum        [sha256.Size]byte
	hex        [5 * 2 * sha256.Size]byte
}

var fingerprinters = sync.Pool{New: func() any { return &fingerprinter{h: sha256.New()} }}

func (f *fingerprinter) plain(s string) []byte {
	f.h.Reset()
	f.h.Write(bytesOf(s))
	return f.h.Sum(f.sum[:0])
}

func (f *fingerprinter) keyed(s string) []byte {
	f.h.Reset()
	f.h.Write(f.ipad[:])
	f.h.Write(bytesOf(s))
	inner := f.h.Sum(f.sum[:0])
	f.h.Reset()
	f.h.Write(f.opad[:])
	f.h.Write(inner)
	return f.h.Sum(f.sum[:0])
}

func (fp *receiptFingerprints) compute(body, result string) {
	f := fingerprinters.Get().(*fingerprinter)
	defer fingerprinters.Put(f)
	rand.Read(f.key[:]) // never fails: crypto/rand crashes the program rather than return an error
	for i := range f.ipad {
		var k byte
		if i < len(f.key) {
			k = f.key[i]
		}
		f.ipad[i], f.opad[i] = k^0x36, k^0x5c
	}
	const n = 2 * sha256.Size
	hex.Encode(f.hex[0*n:], f.plain(body))
	hex.Encode(f.hex[1*n:], f.plain(result))
	hex.Encode(f.hex[2*n:], f.key[:])
	hex.Encode(f.hex[3*n:], f.keyed(body))
	hex.Encode(f.hex[4*n:], f.keyed(result))
	s := string(f.hex[:])
	fp.Input, fp.Output = s[0*n:1*n], s[1*n:2*n]
	fp.HMAC = &wire.FingerprintHMAC{Salt: s[2*n : 3*n], Input: s[3*n : 4*n], Output: s[4*n:]}
}

// bytesOf is s's bytes without a copy, for a hash that only reads them.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
