package d1

import (
	"errors"
	"fmt"
)

// Errors of an input refused whole.
var (
	// ErrD1JSON: the input is not the JSON wrangler d1 execute --json prints.
	ErrD1JSON = errors.New("d1_json_refused")
	// ErrSQLite: the input is not a SQLite database or SQL dump with a directory table.
	ErrSQLite = errors.New("sqlite_refused")
)

// QueryFailedError is an answer that says its query failed ("success":false),
// with the "error" member it gave, as text: it comes from whoever made the
// answer, of any length, so an entry point quoting it to a caller clips Message
// first. It is an ErrD1JSON.
type QueryFailedError struct {
	Message string
}

func (e *QueryFailedError) Error() string {
	return jsonErr("the query failed: %s", e.Message).Error()
}

func (e *QueryFailedError) Unwrap() error { return ErrD1JSON }

func jsonErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s; run wrangler d1 execute <database> --json --command \"SELECT * FROM directory\" and import what it prints", ErrD1JSON, fmt.Sprintf(format, args...))
}

func sqliteErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSQLite, fmt.Sprintf(format, args...))
}

// notATable refuses a directory that is a view or a virtual table: its rows are
// whatever its query yields, possibly without end.
func notATable(typ, def string) error {
	what := typ
	if typ == "table" {
		what = "virtual table"
	}
	return sqliteErr("directory is a %s, not a table: capdir reads the rows stored in a table named directory, "+
		"not what a query yields; export the table itself (wrangler d1 export)", what)
}
