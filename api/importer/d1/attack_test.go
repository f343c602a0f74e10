package d1_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capdir/capdir/api/importer/d1"
)

const dumpTable = "CREATE TABLE directory (key TEXT, type TEXT);\nINSERT INTO directory VALUES ('A','fn');\n"

// A hostile SQL dump writes no file: VACUUM INTO, ATTACH, and extension
// loading are refused, and the dump is refused whole with what to fix; nothing
// appears on the disk.
func TestDumpWritesNoFile(t *testing.T) {
	dir := t.TempDir()
	for _, stmt := range []string{
		"VACUUM INTO '" + filepath.Join(dir, "vacuumed.db") + "';",
		"ATTACH DATABASE '" + filepath.Join(dir, "attached.db") + "' AS x; CREATE TABLE x.t (a);",
		"SELECT load_extension('" + filepath.Join(dir, "ext.so") + "');",
	} {
		var rows []string
		_, err := d1.ReadDump(context.Background(), dumpTable+stmt, collect(&rows))
		if !errors.Is(err, d1.ErrSQLite) {
			t.Errorf("%s: %v; want the dump refused", stmt, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a dump wrote %v on the node's disk", entries)
	}
}

// A dump or a database that would hold a value past what a row may hold, or
// loop without end, is refused: a value over the length limit fails the dump;
// a directory that is a view (whose query a hostile file writes) is refused.
func TestHostileSQLiteBounded(t *testing.T) {
	var rows []string
	_, err := d1.ReadDump(context.Background(), "CREATE TABLE directory (key TEXT, type TEXT, content TEXT);\n"+
		"INSERT INTO directory VALUES ('A','fn', zeroblob(200000000));\n", collect(&rows))
	if !errors.Is(err, d1.ErrSQLite) || !strings.Contains(err.Error(), "too big") {
		t.Errorf("a 200 MB value: %v; want the dump refused", err)
	}
	_, err = d1.ReadDump(context.Background(), "CREATE VIEW directory AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) "+
		"SELECT 'K'||x AS key, 'fn' AS type FROM c;\n", collect(&rows))
	if !errors.Is(err, d1.ErrSQLite) || !strings.Contains(err.Error(), "is a view, not a table") {
		t.Errorf("a directory view without end: %v (%d rows); want it refused", err, len(rows))
	}
}

// A temporary view a dump creates under the table's name is not what is read:
// the table's own rows are.
func TestDumpTempViewDoesNotShadowTheTable(t *testing.T) {
	var rows []string
	res, err := d1.ReadDump(context.Background(), dumpTable+"CREATE TEMP VIEW directory AS WITH RECURSIVE c(x) AS "+
		"(SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT 'K'||x AS key, 'fn' AS type FROM c;\n", collect(&rows))
	if err != nil || res.Rows != 1 || len(rows) != 1 || !strings.Contains(rows[0], `"A"`) {
		t.Fatalf("a dump shadowing its table: %v, %d rows %v; want the table's one row", err, res.Rows, rows)
	}
}

// sqliteFile writes a SQLite database file that schema makes, and returns its path.
func sqliteFile(t *testing.T, schema string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "directory.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(schema); err != nil {
		t.Fatal(err)
	}
	return path
}

// A directory table whose column is generated (computed as each row is read, by
// an expression the file holds) is refused before a row is read, from a database
// file and from a dump: a file of a few hundred bytes could otherwise yield rows of
// any size, as many as it has rows (here each would be 1 MiB; a file could ask for
// 1 GB a value). A database file's stored value past what a dump may make is
// refused too, rather than read into memory whole.
func TestGeneratedColumnRefused(t *testing.T) {
	const generated = "CREATE TABLE directory (key TEXT, type TEXT, content TEXT GENERATED ALWAYS AS (printf('%.*c', 1048576, 'x')) VIRTUAL);\n" +
		"INSERT INTO directory (key, type) WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 64) SELECT 'K'||x, 'fn' FROM c;\n"
	const says = `the directory table's column "content" is generated`
	var rows []string
	_, err := d1.ReadSQLite(context.Background(), sqliteFile(t, generated), collect(&rows))
	if !errors.Is(err, d1.ErrSQLite) || !strings.Contains(err.Error(), says) || len(rows) != 0 {
		t.Errorf("a database file with a generated column: %v (%d rows); want it refused saying %q", err, len(rows), says)
	}
	rows = nil
	_, err = d1.ReadDump(context.Background(), generated, collect(&rows))
	if !errors.Is(err, d1.ErrSQLite) || !strings.Contains(err.Error(), says) || len(rows) != 0 {
		t.Errorf("a dump with a generated column: %v (%d rows); want it refused saying %q", err, len(rows), says)
	}
	rows = nil
	big := sqliteFile(t, "CREATE TABLE directory (key TEXT, type TEXT, content TEXT);\n"+
		"INSERT INTO directory VALUES ('A', 'fn', printf('%.*c', 17000000, 'x'));\n")
	_, err = d1.ReadSQLite(context.Background(), big, collect(&rows))
	if !errors.Is(err, d1.ErrSQLite) || !strings.Contains(err.Error(), "too big") || len(rows) != 0 {
		t.Errorf("a database file's 17 MB value: %v (%d rows); want it refused", err, len(rows))
	}
	// A stored generated column is stored: it is read as any column.
	rows = nil
	stored := sqliteFile(t, "CREATE TABLE directory (key TEXT, type TEXT, content TEXT GENERATED ALWAYS AS ('# WHAT: '||key) STORED);\n"+
		"INSERT INTO directory (key, type) VALUES ('A', 'fn');\n")
	if res, err := d1.ReadSQLite(context.Background(), stored, collect(&rows)); err != nil || res.Rows != 1 {
		t.Errorf("a stored generated column: %+v %v; want its row read", res, err)
	}
}

// dagFile writes a database file of stored rows whose directory table's b-tree is
// made a chain: the root's cells and those of three interior pages each lead all
// to the next page, the last to one leaf, so a plain read of the table visits
// that leaf about 50^3 times as often as the file has rows.
func dagFile(t *testing.T) (path string, stored int) {
	t.Helper()
	const pageSize, rows = 512, 20000
	path = sqliteFile(t, "PRAGMA page_size = 512;\nCREATE TABLE directory (key TEXT, type TEXT);\n"+
		"INSERT INTO directory WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 20000) SELECT printf('K%05d', x), 'fn' FROM c;\n")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	var root int
	err = db.QueryRow("SELECT rootpage FROM sqlite_master WHERE name = 'directory'").Scan(&root)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	header := func(page int) int { // the page's b-tree header
		if page == 1 {
			return 100
		}
		return (page - 1) * pageSize
	}
	cells := func(page int) []int { // where each cell's child pointer is
		h := header(page)
		var at []int
		for i := range int(binary.BigEndian.Uint16(b[h+3:])) {
			at = append(at, (page-1)*pageSize+int(binary.BigEndian.Uint16(b[h+12+2*i:])))
		}
		return at
	}
	const interior = 5 // a table b-tree's interior page
	if b[header(root)] != interior {
		t.Fatalf("page %d is not an interior page", root)
	}
	path1 := []int{root}
	for _, c := range cells(root)[:3] {
		path1 = append(path1, int(binary.BigEndian.Uint32(b[c:])))
	}
	last := path1[len(path1)-1]
	leaf := int(binary.BigEndian.Uint32(b[cells(last)[0]:]))
	for i, page := range path1 {
		next := leaf
		if i+1 < len(path1) {
			next = path1[i+1]
		}
		if b[header(page)] != interior {
			t.Fatalf("page %d is not an interior page: make more rows", page)
		}
		for _, c := range cells(page) {
			binary.BigEndian.PutUint32(b[c:], uint32(next))
		}
		binary.BigEndian.PutUint32(b[header(page)+8:], uint32(next)) // its right-most pointer
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, rows
}

// A database file whose directory table's pages lead to one another over and
// over (a b-tree made a chain of shared pages) is refused as damaged before any
// row is read: read as it is, a file of 20,000 rows yielded tens of millions, and
// a larger one rows without end. A CHECK constraint of the file's is not evaluated
// by the check.
func TestDamagedDatabaseRefused(t *testing.T) {
	path, stored := dagFile(t)
	n := 0
	errTooMany := errors.New("more rows than the file holds")
	_, err := d1.ReadSQLite(context.Background(), path, func([]byte) error {
		if n++; n > stored {
			return errTooMany
		}
		return nil
	})
	if errors.Is(err, errTooMany) || !errors.Is(err, d1.ErrSQLite) || !strings.Contains(err.Error(), "the database file is damaged") || n != 0 {
		t.Fatalf("a file whose pages repeat: %v (%d rows of %d stored read); want it refused as damaged", err, n, stored)
	}
	checked := sqliteFile(t, "CREATE TABLE directory (key TEXT, type TEXT CHECK (length(printf('%.*c', 16000000, 'x')) > 0));\n"+
		"INSERT INTO directory VALUES ('A', 'fn');\n")
	var rows []string
	if res, err := d1.ReadSQLite(context.Background(), checked, collect(&rows)); err != nil || res.Rows != 1 {
		t.Fatalf("a sound file with a CHECK constraint: %+v %v", res, err)
	}
}
