package d1_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capdir/capdir/api/importer/d1"
	"github.com/capdir/capdir/testdata"
)

func collect(rows *[]string) d1.RowFunc {
	return func(row []byte) error {
		*rows = append(*rows, string(row))
		return nil
	}
}

func TestReadJSON(t *testing.T) {
	var rows []string
	in := `[{"results":[{"key":"A","type":"fn","target":null,"seq":null,"enabled":0,"legacy_flag":1}],"success":true,"meta":{"duration":1}}]`
	res, err := d1.ReadJSON(strings.NewReader(in), collect(&rows))
	if err != nil || res.Rows != 1 || strings.Join(res.Ignored, ",") != "legacy_flag" || rows[0] != `{"enabled":0,"key":"A","type":"fn"}` {
		t.Fatalf("got %+v %v %q", res, err, rows)
	}
	for name, tc := range map[string]struct{ in, says string }{
		"garbage":        {"\x00\x01 not json", "it is not JSON"},
		"a number":       {"42", "not the array of results"},
		"failed query":   {`[{"results":[],"success":false,"error":"no such table: directory"}]`, "the query failed: no such table: directory"},
		"row not object": {`[{"results":[1],"success":true}]`, "row 0 is not an object"},
		"cut short":      {`[{"results":[{"key":"A"`, "row 0 is not an object"},
		"unclosed array": {`[{"results":[],"success":true}`, "not closed with ]"},
		"stray brace":    {`[{"results":[],"success":true}}`, "not closed with ]"},
		"second value":   {`[{"results":[],"success":true}] []`, "found trailing data"},
		"trailing word":  {`{"results":[],"success":true}x`, "found trailing data"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := d1.ReadJSON(strings.NewReader(tc.in), collect(new([]string)))
			if !errors.Is(err, d1.ErrD1JSON) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v, want it to say %q", err, tc.says)
			}
		})
	}
	// A failed query's "error" is handed on whole, for the entry point to clip.
	long := strings.Repeat("e", 10<<10)
	_, err = d1.ReadJSON(strings.NewReader(`[{"results":[],"success":false,"error":"`+long+`"}]`), collect(new([]string)))
	var failed *d1.QueryFailedError
	if !errors.As(err, &failed) || failed.Message != long || !errors.Is(err, d1.ErrD1JSON) {
		t.Fatalf("a failed query: %.200v", err)
	}
}

// TestReadDumpContained: a dump cannot reach the file system (ATTACH, VACUUM
// INTO), and one without a directory table says what it needs.
func TestReadDumpContained(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct{ dump, says string }{
		"attach":   {"ATTACH DATABASE '" + filepath.Join(dir, "x.db") + "' AS x; CREATE TABLE x.t(a);", "the SQL dump does not run"},
		"vacuum":   {testdata.DirectoryTableSQL + "; VACUUM INTO '" + filepath.Join(dir, "y.db") + "';", "the SQL dump does not run"},
		"no table": {"CREATE TABLE other(a);", "it has no directory table to read"},
		"not sql":  {"this is not SQL at all", "the SQL dump does not run"},
		"no key":   {"CREATE TABLE directory(a);", "without key and type"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := d1.ReadDump(context.Background(), tc.dump, collect(new([]string)))
			if !errors.Is(err, d1.ErrSQLite) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v, want it to say %q", err, tc.says)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a dump wrote %d files", len(entries))
	}
}

func TestReadSQLiteDumpFile(t *testing.T) {
	rows := testdata.ProductionRows()[:3]
	path := filepath.Join(t.TempDir(), "export.sql")
	if err := os.WriteFile(path, []byte(testdata.SQLDump(rows)), 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	res, err := d1.ReadSQLite(context.Background(), path, collect(&got))
	if err != nil || res.Rows != 3 || !strings.Contains(got[0], `"key":"FN_CAP_0000"`) || !strings.Contains(got[0], `"sensitive":1`) {
		t.Fatalf("got %+v %v %q", res, err, got)
	}
}
