package wire

import (
	"encoding/json"
	"testing"
)

// validSeeds are inputs where JSON validators commonly disagree.
var validSeeds = []string{
	``, ` `, `{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `01`, `1.`, `.1`, `1e`, `1e+`, `1E5`, `-`, `--1`,
	`1.5e-3`, `"a"`, `"\u00e9"`, `"\ud800"`, `"\x"`, `"\u12"`, `"tab	in"`, "\"nl\nin\"", "\"\x00\"", "\"\xff\xfe\"",
	`{"a":1,}`, `[1,]`, `[,1]`, `{"a"}`, `{"a":}`, `{a:1}`, `{'a':1}`, `{"a":1}{}`, `{"a":1} x`, `[1] [2]`,
	`{"a":[1,{"b":null}]}`, `[[[[[[[[[[]]]]]]]]]]`, `{"a":1,"a":2}`, `nul`, `tru`, `NaN`, `Infinity`, `+1`,
	`"\/"`, `"\b\f\n\r\t"`, `{"a" : 1 }`, "\t[1]\n", `{"":""}`, `[1e400]`, `123456789012345678901234567890`,
	`{"invocation_id":"inv_1","result":"x","duration_ms":0.1}`, `"unterminated`, `{"a":"b"`, `]`, `}`,
}

// The envelope's fast path accepts data only when goccy/go-json calls it valid, so
// it must never call valid what encoding/json rejects (and should agree the other
// way too: a disagreement there only costs the slow path).
func FuzzValidAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}
