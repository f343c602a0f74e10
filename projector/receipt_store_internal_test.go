package projector

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
)

// A receipt as the engine appends it, with its fingerprints, salt and keyed
// fingerprints.
const engineReceipt = `{"invocation_id":"inv_01m8s2xe6w2smrsr8k77ywwc6v","trace":"t_wobmvahbh7","actor":"owner:terminal-key","key":"BENCH_ECHO","type":"fn","runner":"fn","ok":true,"ran":true,"material":true,"status":"PROVEN_MATERIAL_RESULT","started_at":"2026-12-01T15:17:32.51943511Z","finished_at":"2026-12-01T15:17:32.519457613Z","duration_ms":0.022,"cost_usd":0,"fingerprints":{"input":"1813562ecc236bcbf7b63a79414e4afe6e5711ffb08b4b7e5e7ee9d9b11ba037","output":"1813562ecc236bcbf7b63a79414e4afe6e5711ffb08b4b7e5e7ee9d9b11ba037","contract":"fa3961cbea8fc3d0c90415b1a50589e36aecc68061a6d20c12d85d3e4ad259d5"},"body":"hello, capdir benchmark","result":"hello, capdir benchmark","fingerprint_hmac":{"salt":"20efd722a193700de5f4f608c810ec1af168456ac03d48769c62bccde90f52f8","input":"321b32946c8ed43ebb939c3792f1d8c75756c7224f470fbf2f8d998172e5a25d","output":"321b32946c8ed43ebb939c3792f1d8c75756c7224f470fbf2f8d998172e5a25d"},"breaker_generation":0,"breaker_kind":"not_counted","worker":"bench","contract_seq":1}`

// Every receipt's data comes back byte for byte from its stored form, whatever
// it holds; an engine's receipt is stored in under a third of its bytes.
func TestReceiptEncodingGivesBackTheBytes(t *testing.T) {
	cases := map[string]string{
		"engine's receipt": engineReceipt,
		"empty object":     `{}`,
		"no fingerprints":  `{"invocation_id":"inv_1","key":"K","ok":false,"result":"ERR:upstream 401"}`,
		"whitespace":       " \t\r\n" + engineReceipt + "\n",
		"upper-case hex":   `{"h":"` + strings.ToUpper(strings.Repeat("ab", 40)) + `"}`,
		"odd hex run":      `{"h":"` + strings.Repeat("a", 33) + `","i":"` + strings.Repeat("0", 65) + `"}`,
		"long hex run":     `{"h":"` + strings.Repeat("0123456789abcdef", 70) + `"}`,
		"hex at the edges": strings.Repeat("f", 64),
		"hex run of 31":    `{"h":"` + strings.Repeat("e", 31) + `"}`,
		"mixed case":       `{"h":"` + strings.Repeat("aB", 40) + `"}`,
		"unicode":          `{"body":"héllo, ☃ \u0000 \\u0001","result":"` + strings.Repeat("9", 100) + `é"}`,
		"raw control byte": "{\"body\":\"\x01" + strings.Repeat("a", 64) + "\"}",
		"format byte":      "\x02{}",
		"as-is byte":       "\x03" + strings.Repeat("a", 64),
	}
	for name, data := range cases {
		stored := encodeReceipt([]byte(data))
		got, err := decodeReceipt(stored)
		if err != nil || !bytes.Equal(got, []byte(data)) {
			t.Errorf("%s: decoded %q (%v), want %q", name, got, err, data)
		}
	}
	if n := len(encodeReceipt([]byte(engineReceipt))); n*3 > len(engineReceipt) {
		t.Errorf("an engine's receipt of %d bytes is stored in %d", len(engineReceipt), n)
	}
}

// A stored receipt damaged inside its encoding does not decode, and nothing
// panics on what a damaged file may hold.
func TestReceiptEncodingRefusesDamage(t *testing.T) {
	good := encodeReceipt([]byte(engineReceipt))
	damaged := [][]byte{
		{receiptCompact},
		{receiptCompact, 0xff, 0xff, 0xff},
		append([]byte{receiptCompact}, bytes.Repeat([]byte{0x55}, 300)...),
		good[:len(good)/2],
	}
	for i, v := range damaged {
		if _, err := decodeReceipt(v); err == nil {
			t.Errorf("damaged value %d decoded", i)
		}
	}
	for _, packed := range [][]byte{{hexRun}, {hexRun, 0}, {hexRun, 5, 1, 2}} {
		if _, err := unpackHex(packed); err == nil {
			t.Errorf("unpacked %x", packed)
		}
	}
}

func FuzzReceiptEncoding(f *testing.F) {
	f.Add([]byte(engineReceipt))
	f.Add([]byte(`{"h":"` + strings.Repeat("ab", 300) + `"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeReceipt(encodeReceipt(data))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("decoded %q (%v), want %q", got, err, data)
		}
		decodeReceipt(append([]byte{receiptCompact}, data...)) // must not panic
	})
}

// What storing and reading a receipt costs: go test -run '^$' -bench ReceiptEncoding ./projector
func BenchmarkReceiptEncoding(b *testing.B) {
	data := []byte(engineReceipt)
	stored := encodeReceipt(data)
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			encodeReceipt(data)
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeReceipt(stored); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A compact receipt whose block claims a length no receipt can have is refused
// before that length is allocated.
func TestReceiptEncodingRefusesAHugeClaimedLength(t *testing.T) {
	v := []byte{receiptCompact, 0xff, 0xff, 0xff, 0xff, 0x0f} // an S2 block claiming 4 GiB
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := decodeReceipt(v)
	runtime.ReadMemStats(&after)
	if err != errReceiptEncoding {
		t.Fatalf("decodeReceipt(a 4 GiB claim) = %d bytes, %v; want errReceiptEncoding", len(got), err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("decodeReceipt(a 4 GiB claim) allocated %d bytes before refusing it", n)
	}
}

func BenchmarkPackHex(b *testing.B) {
	data := []byte(engineReceipt)
	out := make([]byte, 0, len(data))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		packHexTo(out[:0], data)
	}
}
