package testdata_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/capdir/capdir/contract"
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

func TestProductionRows(t *testing.T) {
	rows := testdata.ProductionRows()
	c := testdata.ProductionCounts
	count := map[string]int{}
	for _, r := range rows {
		count[r["type"].(string)]++
		if r["enabled"] == 0 {
			count["disabled"]++
		}
		if r["input_schema"] != nil {
			count["schema"]++
		}
		if r["examples"] != nil {
			count["examples"]++
		}
		if r["sensitive"] == 1 {
			count["sensitive"]++
		}
		if r["runner"] != nil {
			count["runner"]++
		}
	}
	want := map[string]int{"fn": c.Fn, "http": c.HTTP, "agent": c.Agent, "flow": c.Flow, "disabled": c.Disabled,
		"schema": c.InputSchema, "examples": c.Examples, "sensitive": c.Sensitive, "runner": c.WithRunner}
	for k, v := range want {
		if count[k] != v {
			t.Errorf("%s: %d rows, want %d", k, count[k], v)
		}
	}
	if len(rows) != c.Rows || c.Fn+c.HTTP+c.Agent+c.Flow != c.Rows {
		t.Errorf("%d rows, want %d", len(rows), c.Rows)
	}
}

func TestSQLDumpColumns(t *testing.T) {
	dump := testdata.SQLDump(nil)
	for _, c := range contract.ColumnNames() {
		if !strings.Contains(dump, "\n"+c+" ") && !strings.Contains(dump, " "+c+" ") {
			t.Errorf("the table has no column %s", c)
		}
	}
}
