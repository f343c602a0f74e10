package api

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/capdir/capdir/command"
)

// importRetryAfter is the Retry-After of ErrTooManyImports's answer.
const importRetryAfter = "5"

// importDirectory is POST /api/directory/import[?mode=upsert]; with
// ?format=openapi it is importOpenAPI. The body, of at most Config.MaxImportBody
// bytes, is a JSON array of row objects or NDJSON, streamed into
// command.Directory.ImportRows, which decides and writes every row: an array that
// is not well-formed JSON is refused whole (400, nothing written), every other
// problem fails only its row. At most Config.MaxImports imports run at once; one
// more is refused at once with ErrTooManyImports (429), before its body is read.
// The answer, 200, is {"ok":N,"failed":[{"index":i,"key":…,"error":…},…]}, sent
// once every written row is visible; an import that wrote rows but ended in an
// error is a *command.ImportIncompleteError, answered with its report.
func (s *Server) importDirectory(w http.ResponseWriter, r *http.Request) error {
	format, err := importFormat(r)
	if err != nil {
		return err
	}
	if format == FormatOpenAPI {
		return s.importOpenAPI(w, r)
	}
	if err := refuseOpenAPIOptions(r, format); err != nil {
		return err
	}
	upsert, err := importMode(r)
	if err != nil {
		return err
	}
	limit := s.cfg.MaxImportBody
	if r.ContentLength > limit {
		return fmt.Errorf("%w; split the rows into several imports", command.TooLarge("the import body", r.ContentLength, limit))
	}
	release, err := s.admitImport()
	if err != nil {
		return err
	}
	defer release()
	// The import may outlast the server's timeouts: its body is allowed to take as
	// long as it needs without stalling, and its answer gets a write timeout of its own.
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Time{})
	var res command.ImportResult
	if isTableFormat(format) {
		res, err = s.runTableImport(w, r, rc, format, upsert, limit)
	} else {
		res, err = s.runImport(w, r, rc, upsert, limit)
	}
	if s.cfg.HTTPWriteTimeout > 0 { // the answer, whichever it is
		rc.SetWriteDeadline(time.Now().Add(s.cfg.HTTPWriteTimeout))
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// admitImport takes one of the Config.MaxImports places of the imports running
// now, or answers ErrTooManyImports; release gives it back.
func (s *Server) admitImport() (release func(), err error) {
	select {
	case s.imports <- struct{}{}:
		return func() { <-s.imports }, nil
	default:
		return nil, fmt.Errorf("%w: this node already runs as many imports as it allows at once (%d, capdir serve --max-imports); nothing was read or written; retry when one has finished", ErrTooManyImports, cap(s.imports))
	}
}

// openAPIOptions are the query parameters only ?format=openapi reads.
var openAPIOptions = []string{"dry_run", "prune", "prefix", "server", "category", "auth_env", "auth_origin", "base"}

// refuseOpenAPIOptions refuses an import of rows or a table that names an option
// of ?format=openapi only: left unread, dry_run=true would have the rows written,
// and prefix or category rows other than the ones asked for.
func refuseOpenAPIOptions(r *http.Request, format string) error {
	q := r.URL.Query()
	for _, name := range openAPIOptions {
		if q.Has(name) {
			return fmt.Errorf("%w: %s is an option of format=openapi only; a %s import writes its rows as they are, and has no dry run: leave %s out; nothing was read or written",
				ErrBadQuery, name, format, name)
		}
	}
	return nil
}

// importMode reads ?mode=: create (the default) or upsert.
func importMode(r *http.Request) (upsert bool, err error) {
	switch mode := r.URL.Query().Get("mode"); mode {
	case "", "create":
		return false, nil
	case "upsert":
		return true, nil
	default:
		return false, fmt.Errorf("%w: mode must be create (the default) or upsert; got %q", ErrBadQuery, mode)
	}
}

// runImport reads the body of at most limit bytes and writes its rows (see
// command.Directory.ImportRows), its read errors worded as a request body's.
func (s *Server) runImport(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, upsert bool, limit int64) (command.ImportResult, error) {
	body := &progressReader{r: http.MaxBytesReader(w, r.Body, limit), rc: rc, timeout: s.cfg.HTTPReadTimeout}
	return s.dir.ImportRows(r.Context(), body, command.RowsImport{ContentType: r.Header.Get("Content-Type"), Upsert: upsert,
		BodyError: func(err error) error { return bodyError(err, "the import body", r.ContentLength, limit) }})
}

// progressReader reads an import body, moving the connection's read deadline to
// timeout from now before every read: the body may take as long as it needs, but
// may not stall for longer than timeout. (The server's read timeout bounds a whole
// request, which a large import may outlast.)
type progressReader struct {
	r       io.Reader
	rc      *http.ResponseController
	timeout time.Duration
}

func (p *progressReader) Read(b []byte) (int, error) {
	if p.timeout > 0 {
		p.rc.SetReadDeadline(time.Now().Add(p.timeout))
	}
	return p.r.Read(b)
}
