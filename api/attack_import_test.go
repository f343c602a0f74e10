package api_test

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/api/answer"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/testdata"
	_ "modernc.org/sqlite"
)

// A dry run of rows or of a D1/SQLite table stores nothing: dry_run (and every
// other option of format=openapi alone) was left unread by those imports, which
// wrote the rows. Now it is a 400 naming the option, before the body is read, and
// the control stream is as it was.
func TestImportDryRunOfRowsStoresNothing(t *testing.T) {
	n := nodetest.Start(t, nil)
	rows := `[{"key":"DRY","type":"fn","target":"echo","content":"# WHAT: x\n[]"}]`
	d1 := string(testdata.D1JSON(testdata.ProductionRows()[:1]))
	before := nodetest.ControlSeq(t, n)
	for _, tc := range []struct{ query, body, names string }{
		{"dry_run=true", rows, "dry_run"},
		{"format=rows&dry_run=1", rows, "dry_run"},
		{"format=d1&dry_run=true", d1, "dry_run"},
		{"format=sqlite&dry_run=true&mode=upsert", testdata.SQLDump(testdata.ProductionRows()[:1]), "dry_run"},
		{"format=d1&prefix=X_", d1, "prefix"},
		{"category=c", rows, "category"},
	} {
		status, body := send(t, n, "POST", "/api/directory/import?"+tc.query, "application/json", tc.body)
		if status != http.StatusBadRequest || !strings.Contains(body, tc.names+" is an option of format=openapi only") || !strings.Contains(body, "nothing was read or written") {
			t.Errorf("?%s: HTTP %d %s; want 400 naming %s", tc.query, status, body, tc.names)
		}
	}
	if after := nodetest.ControlSeq(t, n); after != before {
		t.Fatalf("dry runs appended %d events", after-before)
	}
	if status, body := send(t, n, "POST", "/api/directory/import?format=rows", "application/json", rows); status != http.StatusOK {
		t.Fatalf("the rows themselves: HTTP %d %s", status, body)
	}
}

// A SQLite database in WAL mode, imported or refused, leaves no file in the data
// dir: reading it, even read-only, made the spooled file's -wal and -shm beside
// it, which outlived the import (one pair an import).
func TestImportTableLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	n := nodetest.Start(t, func(c *capdir.Config) { c.Log.DataDir = dir })
	for name, tc := range map[string]struct {
		schema string
		status int
	}{
		"imported": {"CREATE TABLE directory (key TEXT, type TEXT, target TEXT, content TEXT);\n" +
			"INSERT INTO directory VALUES ('WAL', 'fn', 'echo', '# WHAT: x\n[]');", http.StatusOK},
		"refused": {"CREATE TABLE directory (key TEXT, type TEXT, content TEXT AS (key));\n" +
			"INSERT INTO directory (key, type) VALUES ('WAL2', 'fn');", http.StatusBadRequest},
	} {
		path := filepath.Join(t.TempDir(), "wal.db")
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		if _, err := db.Exec("PRAGMA journal_mode=WAL;\n" + tc.schema); err != nil {
			t.Fatal(err)
		}
		db.Close()
		b, err := os.ReadFile(path)
		if err != nil || b[18] != 2 {
			t.Fatalf("%s: not a WAL database: %v", name, err)
		}
		status, body := send(t, n, "POST", "/api/directory/import?format=sqlite", "application/octet-stream", string(b))
		if status != tc.status {
			t.Fatalf("%s: HTTP %d %s; want %d", name, status, body, tc.status)
		}
		left, _ := filepath.Glob(filepath.Join(dir, "capdir-table-*"))
		if len(left) != 0 {
			t.Fatalf("%s: the import left %v in the data dir", name, left)
		}
	}
}

// A body of many rows that fail is answered with the first
// answer.MaxListedFailures of them listed and the rest counted: every failure
// listed made the answer, and the list the node held, about 40 and 230 times the
// body (3 MB of "{}" lines: a 120 MB answer, 700 MB of heap), so a body at the
// import limit (1 GiB) would exhaust the node's memory.
func TestImportFailuresListedAreBounded(t *testing.T) {
	n := nodetest.Start(t, nil)
	const extra = 5
	before := nodetest.ControlSeq(t, n)
	status, body := send(t, n, "POST", "/api/directory/import", "application/x-ndjson", strings.Repeat("{}\n", answer.MaxListedFailures+extra))
	var res answer.ImportResult
	if status != http.StatusOK || json.Unmarshal([]byte(body), &res) != nil {
		t.Fatalf("HTTP %d %.300s", status, body)
	}
	if len(res.Failed) != answer.MaxListedFailures || res.FailedUnlisted != extra || res.OK != 0 {
		t.Fatalf("%d failures listed, %d unlisted, %d ok; want %d, %d, 0", len(res.Failed), res.FailedUnlisted, res.OK, answer.MaxListedFailures, extra)
	}
	if first := res.Failed[0]; first.Index != 0 || first.Line != 1 || !strings.Contains(first.Error, "key: is required") {
		t.Fatalf("the first failure: %+v", first)
	}
	if after := nodetest.ControlSeq(t, n); after != before {
		t.Fatalf("failed rows appended %d events", after-before)
	}
}
