package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/testdata"
	_ "modernc.org/sqlite"
)

// sqliteFile writes rows into a SQLite database file with the production table.
func sqliteFile(t *testing.T, rows []map[string]any) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "directory.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("PRAGMA synchronous=OFF; BEGIN;\n" + testdata.SQLDump(rows) + "COMMIT;"); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestImportCommandProductionTable imports the 891-row production-shaped
// directory three ways: as wrangler d1 execute --json prints it, as a SQLite
// database, and as a wrangler d1 export dump. Every row arrives with its columns.
func TestImportCommandProductionTable(t *testing.T) {
	rows := testdata.ProductionRows()
	for _, tc := range []struct {
		name string
		args func(t *testing.T) []string
	}{
		{"d1 json", func(t *testing.T) []string { return []string{"--d1", writeFile(t, "d1.json", testdata.D1JSON(rows))} }},
		{"sqlite", func(t *testing.T) []string { return []string{"--sqlite", sqliteFile(t, rows)} }},
		{"dump", func(t *testing.T) []string {
			return []string{"--sqlite", writeFile(t, "export.sql", []byte(testdata.SQLDump(rows)))}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, flags := testServer(t)
			args := tc.args(t)
			stdout, stderr, err := runCLI(t, "", append(append([]string{"import"}, args...), flags...)...)
			if err != nil || stdout != fmt.Sprintf("imported 891 of 891 rows from %s; 0 failed\n", args[1]) {
				t.Fatalf("import: %v\n%s\n%s", err, stdout, stderr)
			}
			got := listRows(t, n)
			count := map[string]int{}
			for _, r := range got {
				count[r.Type]++
				count["sensitive"] += r.Sensitive
				if r.Enabled == 0 {
					count["disabled"]++
				}
			}
			c := testdata.ProductionCounts
			if len(got) != c.Rows || count["fn"] != c.Fn || count["http"] != c.HTTP || count["agent"] != c.Agent || count["flow"] != c.Flow ||
				count["sensitive"] != c.Sensitive || count["disabled"] != c.Disabled {
				t.Fatalf("%d rows: %v", len(got), count)
			}
			// A few rows column by column (the timestamps are the import's own).
			for _, i := range []int{0, 7, 500, 850, 890} {
				want := expectRow(t, rows[i])
				status, body := nodetest.Do(t, n, "GET", "/api/directory/"+want.Key, "")
				var row contract.Row
				if status != 200 || json.Unmarshal([]byte(body), &row) != nil || !sameColumns(row, want) {
					t.Errorf("%s: HTTP %d\n got %s\nwant %+v", want.Key, status, body, want)
				}
			}
		})
	}
}

// expectRow is the row a POST of the table's row m stores.
func expectRow(t *testing.T, m map[string]any) contract.Row {
	t.Helper()
	kept := map[string]any{}
	for k, v := range m {
		if v != nil {
			kept[k] = v
		}
	}
	b, _ := json.Marshal(kept)
	f, err := contract.DecodeFields(b)
	if err != nil {
		t.Fatal(err)
	}
	row, err := contract.Create(f, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return row
}

// sameColumns compares two rows on every column but the timestamps and row_num.
func sameColumns(a, b contract.Row) bool {
	a.UpdatedAt, a.CreatedAt, a.RowNum = "", "", 0
	b.UpdatedAt, b.CreatedAt, b.RowNum = "", "", 0
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func TestImportCommandTableRefused(t *testing.T) {
	n, flags := testServer(t)
	for name, tc := range map[string]struct {
		flag, file, says string
	}{
		"garbage d1":   {"--d1", writeFile(t, "g.json", []byte("\x00garbage")), "d1_json_refused: it is not JSON"},
		"failed query": {"--d1", writeFile(t, "f.json", []byte(`[{"results":[],"success":false,"error":"no such table: directory"}]`)), "the query failed: no such table: directory"},
		"empty table":  {"--d1", writeFile(t, "e.json", []byte(`[{"results":[],"success":true}]`)), "the directory table has no rows"},
		"half a d1":    {"--d1", writeFile(t, "h.json", testdata.D1JSON(testdata.ProductionRows())[:5000]), "nothing was imported"},
		"not sqlite":   {"--sqlite", writeFile(t, "n.db", []byte("garbage that is no SQL")), "sqlite_refused: the SQL dump does not run"},
		"no directory": {"--sqlite", writeFile(t, "o.sql", []byte("CREATE TABLE other(a);")), "it has no directory table to read"},
	} {
		_, _, err := runCLI(t, "", append([]string{"import", tc.flag, tc.file}, flags...)...)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if rows := listRows(t, n); len(rows) != 0 {
		t.Fatalf("refused imports wrote %d rows", len(rows))
	}
}

// capdir import --dry-run (or another --openapi option) of rows, --d1 or --sqlite
// is refused before anything is sent: it used to be ignored, and the dry run
// wrote every row.
func TestImportDryRunOfATableWritesNothing(t *testing.T) {
	n, flags := testServer(t)
	rows := testdata.ProductionRows()[:2]
	before := nodetest.ControlSeq(t, n)
	for _, args := range [][]string{
		{"--d1", writeFile(t, "d1.json", testdata.D1JSON(rows)), "--dry-run"},
		{"--sqlite", sqliteFile(t, rows), "--dry-run", "--upsert"},
		{writeFile(t, "rows.json", []byte(`[{"key":"DRY","type":"fn","target":"echo","content":"# WHAT: x\n[]"}]`)), "--dry-run"},
		{"--d1", writeFile(t, "d1.json", testdata.D1JSON(rows)), "--prefix", "X_"},
	} {
		stdout, stderr, err := runCLI(t, "", append(append([]string{"import"}, args...), flags...)...)
		flag := args[len(args)-1]
		if flag == "--upsert" || flag == "X_" {
			flag = args[len(args)-2]
		}
		if err == nil || !strings.Contains(err.Error(), flag+" is an option of --openapi only") || !strings.Contains(err.Error(), "nothing was imported") {
			t.Errorf("import %v: %v\n%s\n%s; want it refused naming %s", args, err, stdout, stderr, flag)
		}
	}
	if after := nodetest.ControlSeq(t, n); after != before {
		t.Fatalf("dry runs appended %d events: %d rows", after-before, len(listRows(t, n)))
	}
}
