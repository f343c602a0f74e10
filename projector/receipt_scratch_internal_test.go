package projector

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"
)

// packHexOneByteAtATime is packHex as first written, a byte at a time: the
// definition of the stored form, against which the faster one is held.
func packHexOneByteAtATime(data []byte) ([]byte, bool) {
	out := make([]byte, 0, len(data))
	for i := 0; i < len(data); {
		c := data[i]
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			return nil, false
		}
		j := i
		for j < len(data) && isLowerHex(data[j]) {
			j++
		}
		if j-i < minHexRun {
			if j == i {
				j++
			}
			out = append(out, data[i:j]...)
			i = j
			continue
		}
		for j-i >= 2 {
			n := min((j-i)/2, 255)
			out = append(out, hexRun, byte(n))
			out, _ = hex.AppendDecode(out, data[i:i+2*n])
			i += 2 * n
		}
	}
	return out, true
}

// The receipts a fold stores are the bytes they were before the fold reused its
// buffers: packHex gives what packing a byte at a time gives, on receipts and on
// random strings of hex runs of every length, other bytes and control bytes; and a
// scratch reused for receipt after receipt encodes each as encodeReceipt does.
func TestReceiptScratchStoresTheSameBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 26))
	alphabet := "0123456789abcdefABCDEF\"{}:,. é\t\n\x01\x02"
	inputs := []string{"", engineReceipt, "\x02{}", "\x03" + strings.Repeat("a", 64), strings.Repeat("f", 64) + "0"}
	for range 3000 {
		var b strings.Builder
		for b.Len() < rng.IntN(700) {
			if rng.IntN(3) == 0 {
				b.WriteString(strings.Repeat(string("0123456789abcdef"[rng.IntN(16)]), rng.IntN(600)))
			} else {
				b.WriteByte(alphabet[rng.IntN(len(alphabet))])
			}
		}
		inputs = append(inputs, b.String())
	}
	var sc receiptScratch
	for _, in := range inputs {
		want, wantOK := packHexOneByteAtATime([]byte(in))
		got, ok := packHex([]byte(in))
		if ok != wantOK || !bytes.Equal(got, want) {
			t.Fatalf("packHex(%q) = %q, %v; want %q, %v", in, got, ok, want, wantOK)
		}
		if enc, fresh := sc.encode([]byte(in)), encodeReceipt([]byte(in)); !bytes.Equal(enc, fresh) {
			t.Fatalf("a reused scratch stored %q as %q, encodeReceipt as %q", in, enc, fresh)
		}
	}
}

// Encoding a receipt in a reused scratch allocates nothing: the fold stores
// thousands a second.
func TestReceiptScratchEncodesWithoutAllocating(t *testing.T) {
	data := []byte(engineReceipt)
	var sc receiptScratch
	sc.encode(data)
	if n := testing.AllocsPerRun(100, func() { sc.encode(data) }); n != 0 {
		t.Fatalf("encoding a receipt in a reused scratch: %.0f allocations, want 0", n)
	}
}

// BenchmarkReceiptScratchEncode is encoding a receipt as the fold does, in a
// reused scratch (BenchmarkReceiptEncoding/encode: in buffers of its own).
func BenchmarkReceiptScratchEncode(b *testing.B) {
	data := []byte(engineReceipt)
	var sc receiptScratch
	b.ReportAllocs()
	for b.Loop() {
		sc.encode(data)
	}
}
