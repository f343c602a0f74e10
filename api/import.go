package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"

	"github.com/capdir/capdir/contract"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	// importBodyFactor: an import body may be this many times Config.MaxBody
	// (256 MiB by default); each row in it is still capped at MaxBody.
	importBodyFactor = 64
	// importWindow is how many appends an import keeps in flight at once; it stays
	// under the log's async publish limit.
	importWindow = 1024
	// importRowsPerTimeout: the final wait for the projection gets one write
	// timeout per this many rows (and at least one).
	importRowsPerTimeout = 10000
)

// UpsertQuery is the query of an import that replaces rows whose key is present.
// The failures that suggest it name it; capdir import names its --upsert flag
// in its place.
const UpsertQuery = "?mode=upsert"

// ImportFailure reports one row an import did not write.
type ImportFailure struct {
	Index    int    `json:"index"`          // 0-based position among the body's rows
	Line     int    `json:"line,omitempty"` // 1-based line, for NDJSON
	Key      string `json:"key"`
	Error    string `json:"error"`
	HowToFix string `json:"how_to_fix,omitempty"` // for hygiene refusals
}

// ImportResult is the answer to POST /api/directory/import.
type ImportResult struct {
	OK     int             `json:"ok"`
	Failed []ImportFailure `json:"failed"`
	Error  string          `json:"error,omitempty"` // set only when the rows were written but are not yet visible
}

// importRow is one row of an import body, undecoded.
type importRow struct {
	index, line int
	raw         []byte
}

// importDirectory is POST /api/directory/import[?mode=upsert]. The body is a JSON
// array of row objects, or NDJSON (one row object per line): the content type
// application/x-ndjson (or application/ndjson, application/jsonl) says NDJSON;
// otherwise a body whose first non-blank byte is '[' is an array and anything else
// is NDJSON. An array that is not well-formed JSON is refused whole (400, nothing
// written); every other problem fails only its row.
//
// Each row goes through the directory writer like a POST (contract.Create), or, with
// mode=upsert and a key that is present, like a PUT (contract.Replace). Without
// upsert a present key, or a key repeated in the body, fails that row with "exists".
// The answer, 200, is {"ok":N,"failed":[{"index":i,"key":…,"error":…},…]}, sent
// once every written row is visible.
func (s *Server) importDirectory(w http.ResponseWriter, r *http.Request) error {
	var upsert bool
	switch mode := r.URL.Query().Get("mode"); mode {
	case "", "create":
	case "upsert":
		upsert = true
	default:
		return fmt.Errorf("%w: mode must be create (the default) or upsert; got %q", ErrBadQuery, mode)
	}
	body, err := readCapped(w, r, s.cfg.MaxBody*importBodyFactor)
	if err != nil {
		return err
	}
	rows, err := splitImport(body, r.Header.Get("Content-Type"))
	if err != nil {
		return err
	}
	im := &importer{w: s.dir, upsert: upsert, rowLimit: s.cfg.MaxBody, seen: map[string]int{}}
	for _, row := range rows {
		im.add(r.Context(), row)
	}
	res := ImportResult{Failed: []ImportFailure{}}
	err = im.drain(r.Context())
	res.OK = im.ok
	res.Failed = append(res.Failed, im.failed...)
	slices.SortFunc(res.Failed, func(a, b ImportFailure) int { return a.Index - b.Index })
	if err != nil {
		return &ImportIncompleteError{Result: res, Err: err}
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// splitImport cuts an import body into rows. Only an empty body or an array that is
// not well-formed JSON is an error.
func splitImport(body []byte, contentType string) ([]importRow, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%w: empty body; send a JSON array of row objects, or NDJSON (one row object per line)", contract.ErrMalformedJSON)
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines", "application/jsonlines":
		return splitNDJSON(body), nil
	}
	if trimmed[0] != '[' {
		return splitNDJSON(body), nil
	}
	if !json.Valid(trimmed) {
		var v any
		err := json.Unmarshal(trimmed, &v)
		return nil, fmt.Errorf("%w: the body starts with '[' but is not a well-formed JSON array (%v); nothing was imported", contract.ErrMalformedJSON, err)
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if _, err := dec.Token(); err != nil { // '['
		return nil, fmt.Errorf("%w: %v", contract.ErrMalformedJSON, err)
	}
	var rows []importRow
	for i := 0; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("%w: element %d: %v", contract.ErrMalformedJSON, i, err)
		}
		rows = append(rows, importRow{index: i, raw: raw})
	}
	return rows, nil
}

// splitNDJSON returns the non-blank lines of body as rows.
func splitNDJSON(body []byte) []importRow {
	var rows []importRow
	line := 0
	for len(body) > 0 {
		line++
		var l []byte
		l, body, _ = bytes.Cut(body, []byte("\n"))
		if l = bytes.TrimSpace(l); len(l) > 0 {
			rows = append(rows, importRow{index: len(rows), line: line, raw: l})
		}
	}
	return rows
}

// importer writes an import's rows through the directory writer, keeping up to
// importWindow appends in flight. It is used by one request at a time.
type importer struct {
	w        *Directory
	upsert   bool
	rowLimit int64

	seen     map[string]int // key → index of the row of this import that wrote it
	inflight []importInflight
	maxSeq   uint64
	ok       int
	failed   []ImportFailure
}

type importInflight struct {
	row    importRow
	key    string
	future jetstream.PubAckFuture
}

// add decides one row and starts appending it, or records why it failed.
func (im *importer) add(ctx context.Context, row importRow) {
	if int64(len(row.raw)) > im.rowLimit {
		im.fail(row, rawKey(row.raw), fmt.Errorf("%w: the row is %d bytes; the limit is %d", ErrBodyTooLarge, len(row.raw), im.rowLimit))
		return
	}
	f, err := contract.DecodeFields(row.raw)
	if err != nil {
		im.fail(row, rawKey(row.raw), err)
		return
	}
	key := f.Values.Key
	if at, dup := im.seen[key]; dup {
		if !im.upsert {
			im.failMsg(row, key, importRepeatedMessage(key, at), "")
			return
		}
		// The later row replaces the earlier one: it must see it, so settle first.
		if err := im.drain(ctx); err != nil {
			im.fail(row, key, err)
			return
		}
	}
	build := buildCreate(f)
	if im.upsert {
		build = buildUpsert(key, f)
	}
	p, err := im.w.prepare(key, build)
	if err != nil {
		im.fail(row, key, err)
		return
	}
	future, err := im.w.appendAsync(p)
	if err != nil {
		im.fail(row, key, err)
		return
	}
	im.seen[key] = row.index
	im.inflight = append(im.inflight, importInflight{row: row, key: key, future: future})
	if len(im.inflight) >= importWindow {
		im.settle(ctx, im.inflight[0])
		im.inflight = im.inflight[1:]
	}
}

// settle waits for one append's acknowledgement and records its outcome.
func (im *importer) settle(ctx context.Context, in importInflight) {
	seq, err := im.w.awaitAsync(ctx, in.future)
	if err != nil {
		if im.seen[in.key] == in.row.index {
			delete(im.seen, in.key)
		}
		im.fail(in.row, in.key, err)
		return
	}
	im.ok++
	im.maxSeq = max(im.maxSeq, seq)
}

// drain settles every append in flight, then waits until all of them are visible.
func (im *importer) drain(ctx context.Context) error {
	for _, in := range im.inflight {
		im.settle(ctx, in)
	}
	im.inflight = im.inflight[:0]
	if im.maxSeq == 0 {
		return nil
	}
	return im.w.visible(ctx, im.maxSeq, 1+im.ok/importRowsPerTimeout)
}

func (im *importer) fail(row importRow, key string, err error) {
	how := ""
	var refusal *contract.RefusalError
	if errors.As(err, &refusal) {
		how = refusal.HowToFix
	}
	msg := errMessage(keyErr(key, err))
	if errors.Is(err, ErrExists) {
		msg = importExistsMessage(key)
	}
	im.failMsg(row, key, msg, how)
}

func (im *importer) failMsg(row importRow, key, msg, how string) {
	im.failed = append(im.failed, ImportFailure{Index: row.index, Line: row.line, Key: key, Error: msg, HowToFix: how})
}

// rawKey is the row's "key" when it can be read at all, for failure reports.
func rawKey(raw []byte) string {
	var v struct {
		Key any `json:"key"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	if s, ok := v.Key.(string); ok {
		return s
	}
	return ""
}
