package projector

import (
	"bytes"
	"strings"
	"testing"
)

// A receipt stored under its invocation id packs the id it holds to one byte:
// every receipt comes back byte for byte under its key, whatever it holds and
// wherever the key is in it, the engine's receipt is stored in fewer bytes than
// without its key, and a keyed receipt read under no key, or cut, is refused.
func TestReceiptStoredUnderItsKeyGivesBackTheBytes(t *testing.T) {
	const inv = "inv_01m8s2xe6w2smrsr8k77ywwc6v"
	cases := map[string]string{
		"engine's receipt": engineReceipt,
		"key at the start": inv + engineReceipt,
		"key at the end":   engineReceipt + inv,
		"key twice":        `{"a":"` + inv + `","b":"` + inv + `"}`,
		"key only":         inv,
		"key in hex":       `{"h":"` + strings.Repeat("ab", 20) + inv + strings.Repeat("cd", 20) + `"}`,
		"no key":           `{"invocation_id":"inv_other"}`,
		"raw control byte": "{\"body\":\"\x01" + inv + "\"}",
		"control after":    "{\"body\":\"" + inv + "\x01\"}",
		"keyed byte":       "\x05" + inv,
	}
	for name, data := range cases {
		stored := encodeReceiptFor([]byte(inv), []byte(data))
		got, err := decodeReceiptFor([]byte(inv), stored)
		if err != nil || !bytes.Equal(got, []byte(data)) {
			t.Errorf("%s: decoded %q (%v), want %q", name, got, err, data)
		}
	}
	// What holds a control byte, before or after the key or in it, is not JSON:
	// it is stored as it is.
	const ctlInv = "inv_01m8s2xe\x01w2smrsr8k77ywwc6v"
	for _, c := range [][2]string{{inv, cases["raw control byte"]}, {inv, cases["control after"]}, {ctlInv, `{"id":"` + ctlInv + `"}`}} {
		key, data := c[0], c[1]
		stored := encodeReceiptFor([]byte(key), []byte(data))
		if !bytes.Equal(stored, []byte(data)) {
			t.Errorf("%q under %q stored as %q, want it as it is", data, key, stored)
		}
		if got, err := decodeReceiptFor([]byte(key), stored); err != nil || !bytes.Equal(got, []byte(data)) {
			t.Errorf("%q under %q decoded %q (%v)", data, key, got, err)
		}
	}
	keyed := encodeReceiptFor([]byte(inv), []byte(engineReceipt))
	if keyed[0] != receiptKeyed {
		t.Fatalf("the engine's receipt stored under its key starts with %#x", keyed[0])
	}
	if plain := encodeReceipt([]byte(engineReceipt)); len(keyed)+16 > len(plain) {
		t.Errorf("the engine's receipt is stored in %d bytes under its key, %d without", len(keyed), len(plain))
	}
	if _, err := decodeReceipt(keyed); err == nil {
		t.Error("a keyed receipt decoded under no key")
	}
	for _, v := range [][]byte{keyed[:len(keyed)/2], {receiptKeyed}, {receiptKeyed, 0xff, 0xff}} {
		if _, err := decodeReceiptFor([]byte(inv), v); err == nil {
			t.Errorf("a damaged keyed receipt %x decoded", v)
		}
	}
}
