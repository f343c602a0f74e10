package testdata_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/capdir/capdir/testdata"
)

func TestSampleRows(t *testing.T) {
	var rows []map[string]any
	if err := json.Unmarshal(testdata.SampleRows(), &rows); err != nil {
		t.Fatalf("sample_rows.json: %v", err)
	}
	var keys []string
	for _, r := range rows {
		if len(r) != 18 {
			t.Errorf("row %v has %d columns, want the 18 stored columns", r["key"], len(r))
		}
		keys = append(keys, r["key"].(string))
	}
	want := []string{"NOW", "GROK_MODELS", "PROMPT_LAB_AGENT", "BLOOIO_FINISH", "DIR_PATCH", "ZZ_TEST_TEMPERATURE"}
	if !slices.Equal(keys, want) {
		t.Errorf("keys = %v, want %v", keys, want)
	}
	got := rows[5]["target"]
	if got != "GET https://api.open-meteo.com/v1/forecast?latitude=$1&longitude=$2&current=temperature_2m" {
		t.Errorf("ZZ_TEST_TEMPERATURE target = %q", got)
	}
}

func TestSampleRowsIsACopy(t *testing.T) {
	a := testdata.SampleRows()
	a[0] = 'X'
	if b := testdata.SampleRows(); b[0] != '[' {
		t.Fatalf("SampleRows shares its backing array: first byte %q", b[0])
	}
}
