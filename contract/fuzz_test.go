package contract

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/capdir/capdir/testdata"
)

// DecodeFields and the write path never panic on any body; a body they refuse is
// refused with an error that names what is wrong, and one they accept gives a row
// that re-encodes to JSON that decodes to the same fields.
func FuzzDecodeRow(f *testing.F) {
	var rows []json.RawMessage
	if err := json.Unmarshal(testdata.SampleRows(), &rows); err == nil {
		for _, r := range rows {
			f.Add([]byte(r))
		}
	}
	for _, s := range []string{
		`{}`, `{"key":"K","type":"fn"}`, `{"key":"K","type":"weird"}`, `{"key":1}`, `[]`, `null`, `{"key":"K","type":"fn",}`,
		`{"key":"K","type":"http","target":"GET http://h/$1","auth":"bearer:X_API_KEY","sensitive":1,"input_schema":"{\"type\":\"object\"}"}`,
		`{"examples":["a","b"]}`, `{"examples":"[\"a\"]"}`, `{"seq":null,"enabled":true}`, `{"input_schema":"{\"$ref\":\"http://x\"}"}`,
		`{"key":"K","type":"fn","content":"# WHAT: x\n[\"$1\"]","unknown":1}`, "{\"key\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		fields, err := DecodeFields(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("a refusal with no message")
			}
			return
		}
		row, err := Create(fields, now)
		if err != nil {
			var ve *ValidationError
			var re *RefusalError
			if !errors.As(err, &ve) && !errors.As(err, &re) && !errors.Is(err, ErrRequired) && !errors.Is(err, ErrInvalid) {
				t.Fatalf("Create refused %q with an untyped error: %v", data, err)
			}
			return
		}
		b, err := json.Marshal(row)
		if err != nil {
			t.Fatalf("an accepted row does not encode: %v", err)
		}
		again, err := DecodeFields(b)
		if err != nil {
			t.Fatalf("an accepted row's JSON %s does not decode: %v", b, err)
		}
		row2, err := Create(again, now)
		if err != nil {
			t.Fatalf("an accepted row's JSON %s is refused: %v", b, err)
		}
		if Fingerprint(&row) != Fingerprint(&row2) {
			t.Fatalf("the row changed through its JSON: %s", b)
		}
	})
}
