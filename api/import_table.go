package api

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/capdir/capdir/api/importer/d1"
	"github.com/capdir/capdir/command"
)

// The directory table of another deployment, over HTTP:
// POST /api/directory/import?format=d1 takes what wrangler d1 execute --json
// prints, ?format=sqlite a SQLite database file or a wrangler d1 export SQL dump,
// with ?mode=upsert as for rows. The body (at most Config.MaxImportBody) is read
// whole into a file under ImportSpoolDir and its table into NDJSON beside it, so an
// input that is not what it should be is refused whole (400, nothing written);
// then its rows are imported as a rows import's are. Both files, and those SQLite
// makes beside a database it reads, are removed when the import ends.
const (
	FormatD1     = "d1"     // the JSON wrangler d1 execute --json prints
	FormatSQLite = "sqlite" // a SQLite database or SQL dump with a directory table
)

// isTableFormat reports whether format is a directory table's.
func isTableFormat(format string) bool { return format == FormatD1 || format == FormatSQLite }

// runTableImport reads r's table and imports its rows (see FormatD1).
func (s *Server) runTableImport(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, format string, upsert bool, limit int64) (command.ImportResult, error) {
	in, err := os.CreateTemp(s.cfg.ImportSpoolDir, "capdir-table-*")
	if err != nil {
		return command.ImportResult{}, newError(ErrUnavailable, "import spool: %w", err)
	}
	defer os.Remove(in.Name())
	defer removeSQLiteFiles(in.Name())
	defer in.Close()
	body := &progressReader{r: http.MaxBytesReader(w, r.Body, limit), rc: rc, timeout: s.cfg.HTTPReadTimeout}
	if _, err := io.Copy(in, body); err != nil {
		return command.ImportResult{}, bodyError(err, "the table body", r.ContentLength, limit)
	}
	rows, err := os.CreateTemp(s.cfg.ImportSpoolDir, "capdir-table-*.ndjson")
	if err != nil {
		return command.ImportResult{}, newError(ErrUnavailable, "import spool: %w", err)
	}
	defer os.Remove(rows.Name())
	defer rows.Close()
	res, err := readTable(r.Context(), format, in, rows)
	if err != nil {
		return command.ImportResult{}, err
	}
	if _, err := rows.Seek(0, io.SeekStart); err != nil {
		return command.ImportResult{}, newError(ErrUnavailable, "import spool: %w", err)
	}
	nr := r.Clone(r.Context())
	nr.Body, nr.ContentLength = rows, -1
	nr.Header.Set("Content-Type", "application/x-ndjson")
	out, err := s.runImport(w, nr, rc, upsert, 1<<62)
	out.IgnoredColumns = res.Ignored
	return out, err
}

// removeSQLiteFiles removes the files SQLite keeps beside the database at path:
// reading a database in WAL mode, even read-only, makes its -wal and -shm, which
// outlive the connection.
func removeSQLiteFiles(path string) {
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		os.Remove(path + suffix)
	}
}

// readTable writes the rows of in's directory table to out as NDJSON; an input
// that is not a table of format is ErrBadRequest, saying nothing was imported.
func readTable(ctx context.Context, format string, in *os.File, out io.Writer) (d1.Result, error) {
	w := bufio.NewWriterSize(out, 64<<10)
	write := func(row []byte) error {
		w.Write(row)
		return w.WriteByte('\n')
	}
	var res d1.Result
	var err error
	if format == FormatSQLite {
		res, err = d1.ReadSQLite(ctx, in.Name(), write)
	} else if _, err = in.Seek(0, io.SeekStart); err == nil {
		res, err = d1.ReadJSON(in, write)
	}
	if err == nil {
		err = w.Flush()
	}
	var failed *d1.QueryFailedError
	if errors.As(err, &failed) {
		// The answer's own "error" is quoted back clipped, as a parameter is.
		err = &d1.QueryFailedError{Message: clipParam(failed.Message)}
	}
	switch {
	case errors.Is(err, d1.ErrD1JSON), errors.Is(err, d1.ErrSQLite):
		return res, badRequest(err.Error() + "; nothing was imported")
	case err != nil:
		return res, newError(ErrUnavailable, "the table was not read (%w); nothing was imported", err)
	case res.Rows == 0:
		return res, badRequest(fmt.Sprintf("the %s body's directory table has no rows; nothing was imported", format))
	}
	return res, nil
}
