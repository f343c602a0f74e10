package d1

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// MaxDumpBytes caps a SQL dump, which is read whole and loaded into memory.
const MaxDumpBytes = 256 << 20

// MaxValueBytes caps one value (a string or blob) a SQL dump makes: far past
// what a row's column may hold, far short of what would exhaust memory.
const MaxValueBytes = 16 << 20

// sqliteMagic starts every SQLite database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// ReadSQLite reads the directory table of path, a SQLite database file or a SQL
// dump (what wrangler d1 export writes: CREATE TABLE and INSERT statements), and
// calls fn with each row, in the table's order. A database is opened read-only; a dump is
// run in an in-memory database first.
func ReadSQLite(ctx context.Context, path string, fn RowFunc) (Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	head := make([]byte, len(sqliteMagic))
	n, _ := io.ReadFull(f, head)
	if bytes.Equal(head[:n], sqliteMagic) {
		db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&_pragma=query_only(1)")
		if err != nil {
			return Result{}, sqliteErr("%v", err)
		}
		defer db.Close()
		conn, err := db.Conn(ctx)
		if err != nil {
			return Result{}, sqliteErr("%v", err)
		}
		defer conn.Close()
		// A value of the file is bounded as a dump's is: one past what a row may
		// hold would only fill memory before its row failed.
		if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_LENGTH, MaxValueBytes); err != nil {
			return Result{}, sqliteErr("%v", err)
		}
		if err := checkPages(ctx, conn); err != nil {
			return Result{}, err
		}
		return readTable(ctx, conn, fn)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return Result{}, err
	}
	dump, err := io.ReadAll(io.LimitReader(f, MaxDumpBytes+1))
	if err != nil {
		return Result{}, err
	}
	if len(dump) > MaxDumpBytes {
		return Result{}, sqliteErr("%s is neither a SQLite database nor a SQL dump of at most %d bytes", path, MaxDumpBytes)
	}
	return ReadDump(ctx, string(dump), fn)
}

// ReadDump runs a SQL dump in an in-memory database that may attach no other one,
// and reads its directory table like ReadSQLite.
func ReadDump(ctx context.Context, dump string, fn RowFunc) (Result, error) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return Result{}, sqliteErr("%v", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one connection: the in-memory database is its own
	conn, err := db.Conn(ctx)
	if err != nil {
		return Result{}, sqliteErr("%v", err)
	}
	defer conn.Close()
	if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_ATTACHED, 0); err != nil {
		return Result{}, sqliteErr("%v", err)
	}
	if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_LENGTH, MaxValueBytes); err != nil {
		return Result{}, sqliteErr("%v", err)
	}
	limit, refused, err := limitDump(ctx, conn, len(dump))
	if err != nil {
		return Result{}, err
	}
	if _, err := conn.ExecContext(ctx, dump); err != nil {
		return Result{}, dumpError(err, limit, *refused)
	}
	if err := endDump(conn); err != nil {
		return Result{}, err
	}
	return readTable(ctx, conn, fn)
}

// checkTable refuses a directory of main that is a view or a virtual table, or
// has a virtual generated column; a missing one is readTable's to refuse. A
// temporary object of the same name, which a dump may create, is never read: the
// query names main.
func checkTable(ctx context.Context, db querier) error {
	rows, err := db.QueryContext(ctx, `SELECT type, coalesce(sql, '') FROM main.sqlite_master WHERE name = 'directory' COLLATE NOCASE AND type IN ('table', 'view')`)
	if err != nil {
		return sqliteErr("%v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var typ, def string
		if err := rows.Scan(&typ, &def); err != nil {
			return sqliteErr("%v", err)
		}
		if typ != "table" || strings.HasPrefix(strings.ToUpper(strings.TrimSpace(def)), "CREATE VIRTUAL") {
			return notATable(typ, def)
		}
	}
	if err := rows.Err(); err != nil {
		return sqliteErr("%v", err)
	}
	return checkGenerated(ctx, db)
}

// checkGenerated refuses a directory table with a virtual generated column: its
// values are not stored but computed, by the file's expression, as each row is
// read, so a file of a few bytes could yield values (and rows of them) of any
// size. (A stored generated column's values are stored, as any column's.) The
// PRAGMA is read, not its table-valued function, which a table of that name in the
// file would shadow.
func checkGenerated(ctx context.Context, db querier) error {
	rows, err := db.QueryContext(ctx, `PRAGMA main.table_xinfo("directory")`)
	if err != nil {
		return sqliteErr("%v", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return sqliteErr("%v", err)
	}
	vals, ptrs := scanTargets(len(cols))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return sqliteErr("%v", err)
		}
		col := map[string]any{}
		for i, c := range cols {
			col[c] = vals[i]
		}
		if hidden, _ := col["hidden"].(int64); hidden == xinfoVirtualGenerated {
			name, _ := col["name"].(string)
			return sqliteErr("the directory table's column %q is generated: its values are computed as each row is read, not stored, "+
				"so capdir does not read them; export the table with plain columns (wrangler d1 export)", name)
		}
	}
	return rows.Err()
}

// xinfoVirtualGenerated is table_xinfo's hidden value of a virtual generated column.
const xinfoVirtualGenerated = 2

// checkPages refuses a database file whose directory table is not a sound b-tree,
// before a row is read: a page that two cells lead to is read again each time, so
// a file of a few pages whose interior pages all lead to the next could yield rows
// without end (and an overflow chain that runs into itself, a value). SQLite's
// quick_check walks each page once; the CHECK constraints it would evaluate,
// expressions the file holds, are left out (ignore_check_constraints). A missing
// directory table is readTable's to refuse.
func checkPages(ctx context.Context, conn *sql.Conn) error {
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name = 'directory' COLLATE NOCASE`).Scan(&n); err != nil {
		return sqliteErr("%v", err)
	}
	if n == 0 {
		return nil
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA ignore_check_constraints = ON"); err != nil {
		return sqliteErr("%v", err)
	}
	var res string
	if err := conn.QueryRowContext(ctx, `PRAGMA main.quick_check("directory")`).Scan(&res); err != nil {
		return sqliteErr("the database file is damaged: %v; export the directory table again (wrangler d1 export)", err)
	}
	if res == "ok" {
		return nil
	}
	problem := res
	for line := range strings.Lines(res) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "***") {
			problem = line
			break
		}
	}
	if len(problem) > 200 {
		problem = problem[:200] + "…"
	}
	return sqliteErr("the database file is damaged (SQLite's quick_check of its directory table: %s); capdir reads only a sound table, "+
		"whose rows are each read once: export the directory table again (wrangler d1 export)", problem)
}

// querier is a *sql.DB or *sql.Conn.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readTable reads SELECT * FROM main.directory, once it is known to be a table:
// a view's query is the file's to write, and may yield rows without end.
func readTable(ctx context.Context, db querier, fn RowFunc) (Result, error) {
	if err := checkTable(ctx, db); err != nil {
		return Result{}, err
	}
	rows, err := db.QueryContext(ctx, `SELECT * FROM main.directory`)
	if err != nil {
		return Result{}, sqliteErr("it has no directory table to read (%v); capdir reads the table named directory, with the columns %s", err, strings.Join(Columns, ", "))
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return Result{}, sqliteErr("%v", err)
	}
	if !slices.Contains(cols, "key") || !slices.Contains(cols, "type") {
		return Result{}, sqliteErr("the directory table has the columns %s, without key and type", strings.Join(cols, ", "))
	}
	var res Result
	ignored := map[string]bool{}
	vals, ptrs := scanTargets(len(cols))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return res, sqliteErr("row %d: %v", res.Rows, err)
		}
		row := make(map[string]any, len(cols))
		for i, c := range cols {
			switch v := vals[i].(type) {
			case []byte:
				row[c] = string(v)
			default:
				row[c] = v
			}
		}
		if err := emit(row, fn, &res, ignored); err != nil {
			return res, err
		}
	}
	if err := rows.Err(); err != nil {
		return res, sqliteErr("%v", err)
	}
	res.Ignored = sortedSet(ignored)
	return res, nil
}

// scanTargets is n values and the pointers to them that rows.Scan fills.
func scanTargets(n int) (vals, ptrs []any) {
	vals, ptrs = make([]any, n), make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	return vals, ptrs
}
