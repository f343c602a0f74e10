package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/testdata"
)

// POST /api/directory/import?format=d1 and ?format=sqlite take the 891-row
// production table as wrangler prints it and as a wrangler d1 export dump; the
// same table again with mode=upsert appends nothing.
func TestImportTableOverHTTP(t *testing.T) {
	rows := testdata.ProductionRows()
	for _, tc := range []struct{ format, body string }{
		{"d1", string(testdata.D1JSON(rows))},
		{"sqlite", testdata.SQLDump(rows)},
	} {
		t.Run(tc.format, func(t *testing.T) {
			n := nodetest.Start(t, nil)
			status, body := send(t, n, "POST", "/api/directory/import?format="+tc.format, "application/octet-stream", tc.body)
			if status != http.StatusOK || !strings.HasPrefix(body, `{"ok":891,"failed":[]`) {
				t.Fatalf("import: HTTP %d %.300s", status, body)
			}
			before := nodetest.ControlSeq(t, n)
			status, body = send(t, n, "POST", "/api/directory/import?format="+tc.format+"&mode=upsert", "application/octet-stream", tc.body)
			if status != http.StatusOK || !strings.HasPrefix(body, `{"ok":891,"unchanged":891,"failed":[]`) {
				t.Fatalf("the same table again: HTTP %d %.300s", status, body)
			}
			if after := nodetest.ControlSeq(t, n); after != before {
				t.Fatalf("an unchanged table appended %d events", after-before)
			}
		})
	}
}

// A table import is the owner's, and a body that is not a table is refused whole
// with what is wrong: not JSON, a failed result, no rows, no directory table, a
// file that is neither a database nor a dump, a table whose column is generated as
// it is read, a body over the limit. Nothing is appended.
func TestImportTableRefused(t *testing.T) {
	n := nodetest.Start(t, func(c *capdir.Config) { c.API.MaxImportBody = 64 << 10 })
	before := nodetest.ControlSeq(t, n)
	d1 := string(testdata.D1JSON(testdata.ProductionRows()[:1]))
	for _, key := range []string{"", "wrong-key-wrong-key-wrong"} {
		if status, body := nodetest.DoKey(t, n, "POST", "/api/directory/import?format=d1", d1, key); status != http.StatusUnauthorized {
			t.Errorf("key %q: HTTP %d %s", key, status, body)
		}
	}
	if status, body := nodetest.DoToken(t, n, "POST", "/api/directory/import?format=sqlite", d1, "not-a-token"); status != http.StatusUnauthorized {
		t.Errorf("a token: HTTP %d %s", status, body)
	}
	for _, tc := range []struct {
		format, body string
		status       int
		want         string
	}{
		{"d1", `{"results":`, 400, "nothing was imported"},
		{"d1", `[{"results":[],"success":false,"error":"no such table: directory"}]`, 400, "nothing was imported"},
		{"d1", `[{"results":[],"success":true}]`, 400, "no rows"},
		{"sqlite", "CREATE TABLE other (x TEXT);", 400, "nothing was imported"},
		{"sqlite", "SQLite format 3\x00" + strings.Repeat("\x00", 200), 400, "nothing was imported"},
		{"sqlite", "ATTACH DATABASE '/etc/passwd' AS p;", 400, "nothing was imported"},
		{"sqlite", "CREATE TABLE directory (key TEXT, type TEXT, content TEXT AS ('# WHAT: '||printf('%.*c', 65536, 'x')));\n" +
			"INSERT INTO directory (key, type) VALUES ('GENERATED', 'fn');", 400, "is generated"},
		{"d1", `[{"results":[` + strings.Repeat(`{"key":"K","type":"fn"},`, 5000) + `{"key":"K","type":"fn"}],"success":true}]`, 413, "limit"},
		{"excel", d1, 400, "d1 or sqlite"},
	} {
		status, body := send(t, n, "POST", "/api/directory/import?format="+tc.format, "application/octet-stream", tc.body)
		if status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("format %s %.60q: HTTP %d %.300s; want %d naming %q", tc.format, tc.body, status, body, tc.status, tc.want)
		}
	}
	// A failed result's own "error" is quoted back clipped, whatever its length.
	long := "x" + strings.Repeat("é", 20<<10) // cut at 40 bytes, inside an é
	status, body := send(t, n, "POST", "/api/directory/import?format=d1", "application/octet-stream",
		`[{"results":[],"success":false,"error":"`+long+`"}]`)
	if want := "the query failed: x" + strings.Repeat("é", 19) + "…; run wrangler"; status != 400 || !strings.Contains(body, want) || len(body) > 1024 {
		t.Errorf("a failed result with a 40 KiB error: HTTP %d, %d bytes %.300s; want 400 quoting %q", status, len(body), body, want)
	}
	if after := nodetest.ControlSeq(t, n); after != before {
		t.Fatalf("refused tables appended %d events", after-before)
	}
}
