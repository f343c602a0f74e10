package contract_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/testdata"
)

// now is the clock of every write in these tests: the sample POST receipt time.
var now = time.Date(2026, 7, 26, 4, 36, 19, 832_000_000, time.UTC)

// sampleRaw returns the fixture rows as raw JSON objects, in file order.
func sampleRaw(t testing.TB) []json.RawMessage {
	t.Helper()
	var raws []json.RawMessage
	if err := json.Unmarshal(testdata.SampleRows(), &raws); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return raws
}

// sampleRow returns the fixture row with the given key, as stored.
func sampleRow(t testing.TB, key string) contract.Row {
	t.Helper()
	var rows []contract.Row
	if err := json.Unmarshal(testdata.SampleRows(), &rows); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	for _, r := range rows {
		if r.Key == key {
			return r
		}
	}
	t.Fatalf("fixture has no row %s", key)
	return contract.Row{}
}

func mustDecode(t testing.TB, body string) contract.Fields {
	t.Helper()
	f, err := contract.DecodeFields([]byte(body))
	if err != nil {
		t.Fatalf("DecodeFields(%s): %v", body, err)
	}
	return f
}

func ptr(v int64) *int64 { return &v }
