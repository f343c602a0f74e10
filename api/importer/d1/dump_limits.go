package d1

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// MaxDumpDatabaseBytes caps the in-memory database a SQL dump builds, twice
// MaxDumpBytes: a dump's rows take about as many bytes in the database as in its
// text, so only a dump that makes rows its text does not hold (zeroblob, a
// recursive query) comes near it.
const MaxDumpDatabaseBytes = 2 * MaxDumpBytes

// dumpDatabaseFloor is what any dump may grow its database to, whatever its length.
const dumpDatabaseFloor = 16 << 20

// dumpDatabaseBytes is how far a dump of n bytes may grow its database: four
// times its length past dumpDatabaseFloor, up to MaxDumpDatabaseBytes.
func dumpDatabaseBytes(n int) int64 {
	return min(dumpDatabaseFloor+4*int64(n), MaxDumpDatabaseBytes)
}

// dumpPragmas are the pragmas a dump may run: the ones wrangler d1 export and
// sqlite3's .dump write. Any other (max_page_count, page_size, cache_size, the
// process's heap limits…) could lift the bounds set here, or reach past the dump.
var dumpPragmas = map[string]bool{"defer_foreign_keys": true, "foreign_keys": true}

// limitDump caps how many pages conn's main and temp databases may have, at
// dumpDatabaseBytes(n), and installs an authorizer refusing any pragma outside
// dumpPragmas. It returns the cap and the name of the pragma a statement was
// refused, once one was (see dumpError).
func limitDump(ctx context.Context, conn *sql.Conn, n int) (int64, *string, error) {
	var pageSize int64
	if err := conn.QueryRowContext(ctx, "PRAGMA page_size").Scan(&pageSize); err != nil || pageSize <= 0 {
		return 0, nil, sqliteErr("page size: %v", err)
	}
	limit := dumpDatabaseBytes(n)
	for _, schema := range []string{"main", "temp"} {
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA %s.max_page_count = %d", schema, limit/pageSize)); err != nil {
			return 0, nil, sqliteErr("%v", err)
		}
	}
	refused := new(string)
	err := conn.Raw(func(dc any) error {
		reg, ok := dc.(sqlite.AuthorizerRegisterer)
		if !ok {
			return errors.New("the SQLite driver has no authorizer")
		}
		return reg.RegisterAuthorizer(func(action sqlite.AuthorizerActionCode, arg1, _, _, _ string) sqlite.AuthorizerReturnCode {
			if action == sqlite.AuthPragma && !dumpPragmas[strings.ToLower(arg1)] {
				*refused = arg1
				return sqlite.AuthorizerDeny
			}
			return sqlite.AuthorizerOK
		})
	})
	if err != nil {
		return 0, nil, sqliteErr("%v", err)
	}
	return limit, refused, nil
}

// dumpError is the refusal of a dump that failed with err: past the database's
// cap, or at a refused pragma, it says so.
func dumpError(err error, limit int64, refusedPragma string) error {
	var se *sqlite.Error
	switch {
	case errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL:
		return sqliteErr("the dump grows the database past %d MiB (a dump of n bytes may make a database of 16 MiB + 4n, at most %d MiB); "+
			"export the directory table alone", limit>>20, MaxDumpDatabaseBytes>>20)
	case refusedPragma != "":
		return sqliteErr("the dump runs PRAGMA %s, which an import does not run (a dump may set only %s); remove it", refusedPragma, "defer_foreign_keys and foreign_keys")
	}
	return sqliteErr("the SQL dump does not run: %v", err)
}

// endDump removes the authorizer limitDump installed, once the dump has run: what
// runs on conn after it is capdir's own reading of the table (checkTable reads a
// PRAGMA the authorizer would refuse).
func endDump(conn *sql.Conn) error {
	err := conn.Raw(func(dc any) error {
		reg, ok := dc.(sqlite.AuthorizerRegisterer)
		if !ok {
			return errors.New("the SQLite driver has no authorizer")
		}
		return reg.RegisterAuthorizer(nil)
	})
	if err != nil {
		return sqliteErr("%v", err)
	}
	return nil
}
