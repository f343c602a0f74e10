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

// The receipts a fold stores are the bytes packing a byte at a time gives:
// packHex, which copies a stretch at a time, gives the same on receipts and on
// random strings of hex runs of every length, other bytes and control bytes.
func TestPackHexStoresTheSameBytes(t *testing.T) {
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
	for _, in := range inputs {
		want, wantOK := packHexOneByteAtATime([]byte(in))
		got, ok := packHex([]byte(in))
		if ok != wantOK || !bytes.Equal(got, want) {
			t.Fatalf("packHex(%q) = %q, %v; want %q, %v", in, got, ok, want, wantOK)
		}
	}
}
