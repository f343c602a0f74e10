package d1_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/capdir/capdir/api/importer/d1"
	"github.com/capdir/capdir/testdata"
)

// A dump of a few hundred bytes that makes rows its text does not hold (a
// recursive query of zeroblobs, into its own table or a temporary one) is refused
// once its in-memory database passes its cap, saying by how much it may grow; a
// dump that would lift the cap itself (max_page_count, page_size) or reach past the
// dump (the heap limits) is refused naming the pragma. No row is read.
func TestDumpDatabaseCapped(t *testing.T) {
	const grow = " WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 64) SELECT 'K'||x, 'fn', zeroblob(1048576) FROM c;\n"
	for name, tc := range map[string]struct{ dump, says string }{
		"zeroblobs": {"CREATE TABLE directory (key TEXT, type TEXT, content BLOB);\nINSERT INTO directory" + grow,
			"the dump grows the database past 16 MiB"},
		"a temp table": {dumpTable + "CREATE TEMP TABLE t (key TEXT, type TEXT, content BLOB);\nINSERT INTO t" + grow,
			"the dump grows the database past 16 MiB"},
		"max_page_count":      {"PRAGMA max_page_count = 2147483647;\n" + dumpTable, "the dump runs PRAGMA max_page_count"},
		"temp.max_page_count": {"PRAGMA temp.max_page_count = 2147483647;\n" + dumpTable, "the dump runs PRAGMA max_page_count"},
		"page_size":           {"PRAGMA page_size = 65536; VACUUM;\n" + dumpTable, "the dump runs PRAGMA page_size"},
		"hard_heap_limit":     {"PRAGMA hard_heap_limit = 1;\n" + dumpTable, "the dump runs PRAGMA hard_heap_limit"},
	} {
		t.Run(name, func(t *testing.T) {
			var rows []string
			_, err := d1.ReadDump(context.Background(), tc.dump, collect(&rows))
			if !errors.Is(err, d1.ErrSQLite) || !strings.Contains(err.Error(), tc.says) || len(rows) != 0 {
				t.Fatalf("got %v (%d rows), want the dump refused saying %q", err, len(rows), tc.says)
			}
		})
	}
	// What wrangler d1 export writes still runs, its pragma included.
	rows := testdata.ProductionRows()[:3]
	var got []string
	if res, err := d1.ReadDump(context.Background(), testdata.SQLDump(rows), collect(&got)); err != nil || res.Rows != 3 {
		t.Fatalf("a wrangler d1 export dump: %+v %v", res, err)
	}
}
