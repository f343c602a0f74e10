package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/testdata"
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
