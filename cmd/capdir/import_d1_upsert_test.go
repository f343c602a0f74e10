package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/testdata"
)

// The 891-row production table imported again with --upsert, unchanged, appends
// nothing and says so; one row changed in it appends that row alone.
func TestImportTableAgainAppendsNothing(t *testing.T) {
	rows := testdata.ProductionRows()
	n, flags := testServer(t)
	file := writeFile(t, "d1.json", testdata.D1JSON(rows))
	cli := func(path string) string {
		t.Helper()
		stdout, stderr, err := runCLI(t, "", append([]string{"import", "--d1", path, "--upsert"}, flags...)...)
		if err != nil {
			t.Fatalf("import: %v\n%s\n%s", err, stdout, stderr)
		}
		return stdout
	}
	seq := func() uint64 { return nodetest.ControlSeq(t, n) }
	cli(file)
	before := seq()
	if out := cli(file); out != fmt.Sprintf("imported 891 of 891 rows from %s; 0 failed; 891 unchanged (nothing written for them)\n", file) {
		t.Fatalf("the same table again: %q", out)
	}
	if after := seq(); after != before {
		t.Fatalf("an unchanged re-import appended %d events", after-before)
	}
	rows[7]["category"] = "moved"
	changed := writeFile(t, "d1-changed.json", testdata.D1JSON(rows))
	if out := cli(changed); !strings.Contains(out, "890 unchanged") {
		t.Fatalf("one row changed: %q", out)
	}
	if after := seq(); after != before+1 {
		t.Fatalf("one changed row appended %d events, want 1", after-before)
	}
}
