package command

import (
	"bufio"
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"slices"

	"github.com/capdir/capdir/api/answer"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
)

const (
	// importWindow is how many appends an import keeps in flight at once; it stays
	// under the log's async publish limit.
	importWindow = 1024
	// importWindowBytes bounds the events an import keeps in flight, in bytes (one
	// row at a time when a row is larger).
	importWindowBytes = 4 << 20
	// importRowsPerTimeout: the final wait for the projection gets one write
	// timeout per this many rows (and at least one).
	importRowsPerTimeout = 10000
)

// UpsertQuery is the query of an import that replaces rows whose key is present.
// The failures that suggest it name it; capdir import names its --upsert flag
// in its place.
const UpsertQuery = "?mode=upsert"

// An import's answer is declared in api/answer, which the Go client reads too;
// these are the same types.
type (
	ImportFailure = answer.ImportFailure
	ImportWarning = answer.ImportWarning
	ImportResult  = answer.ImportResult
)

// RowsImport is how ImportRows reads an import body and writes its rows.
type RowsImport struct {
	// ContentType is the body's: application/x-ndjson (or application/ndjson,
	// application/jsonl) says NDJSON; otherwise a body whose first non-blank byte
	// is '[' is an array and anything else is NDJSON.
	ContentType string
	// Upsert replaces the row of a key that is present, as Replace does; without
	// it a present key, or a key repeated in the body, fails that row with exists.
	Upsert bool
	// BodyError words an error met reading the body itself (over its limit,
	// stalled); nil keeps it as it is. The body's syntax and the spool's errors
	// are not passed to it.
	BodyError func(error) error
}

// ImportRows reads body, a JSON array of row objects or NDJSON (one row object
// per line), and writes its rows through the Directory, each like a Create (or,
// with in.Upsert and a key that is present, like a Replace). An array that is not
// well-formed JSON is refused whole (contract.ErrMalformedJSON, nothing written);
// every other problem fails only its row: a row over the row limit fails with
// payload_too_large, a present key (without upsert) or a key repeated in the body
// with exists.
//
// The body is streamed: rows are read and written one at a time, so memory does
// not grow with the body. An array is first spooled to a temporary file in the
// Config's ImportSpoolDir while its syntax is checked; NDJSON rows are written as
// they arrive. Once rows are being written the import runs to its end, whatever
// ctx does (each wait is bounded by the write timeout), and returns once every
// written row is visible. When rows were written but the import ended in an error
// (the body stopped early, the rows are not yet visible) the error is an
// *ImportIncompleteError that reports every row.
func (d *Directory) ImportRows(ctx context.Context, body io.Reader, in RowsImport) (ImportResult, error) {
	word := in.BodyError
	if word == nil {
		word = func(err error) error { return err }
	}
	readErr := func(err error) error {
		if errors.Is(err, contract.ErrMalformedJSON) || errors.Is(err, ErrUnavailable) {
			return err
		}
		return word(err)
	}
	rows, done, err := d.importRows(bufio.NewReaderSize(body, 64<<10), in.ContentType)
	if err != nil {
		return ImportResult{}, readErr(err)
	}
	defer done()
	ctx = context.WithoutCancel(ctx)
	im := &importer{w: d, upsert: in.Upsert, seed: maphash.MakeSeed(), seen: map[uint64]int{}}
	var stopped error
	for {
		row, err := rows.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			stopped = fmt.Errorf("%w; the rows before that point were imported (see ok and failed)", readErr(err))
			break
		}
		im.add(ctx, row)
	}
	err = im.drain(ctx)
	if stopped != nil {
		err = stopped
	}
	res := importResult(im)
	if err != nil {
		return ImportResult{}, &ImportIncompleteError{Result: res, Err: err}
	}
	return res, nil
}

// importRows returns the body's rows: NDJSON as it arrives, an array from its spool.
// done releases them.
func (d *Directory) importRows(body *bufio.Reader, contentType string) (rows rowSource, done func(), err error) {
	array, lines, err := sniffImport(body, contentType)
	if err != nil {
		return nil, nil, err
	}
	if !array {
		return &ndjsonRows{br: body, limit: d.rowLimit, line: lines}, func() {}, nil
	}
	return spoolArray(body, d.spoolDir, d.rowLimit)
}

// importResult is what im did: how many rows it wrote, and its failures in order.
func importResult(im *importer) ImportResult {
	res := ImportResult{OK: im.ok, Unchanged: im.unchanged, Failed: append([]ImportFailure{}, im.failed...), FailedUnlisted: im.unlisted, Warnings: im.warned}
	slices.SortFunc(res.Failed, func(a, b ImportFailure) int { return a.Index - b.Index })
	return res
}

// importer writes an import's rows through the Directory, keeping up to
// importWindow appends (and importWindowBytes of events) in flight. It keeps nothing
// of a row once its append is acknowledged but a hash of its key and its index (for
// a key repeated in the import), and the failures. It is used by one request at a
// time.
type importer struct {
	w      *Directory
	upsert bool

	seed     maphash.Seed
	seen     map[uint64]int // hash of a key → index of the row of this import that wrote it
	inflight []importInflight
	bytes    int // event bytes in flight
	maxSeq   uint64
	ok       int
	// unchanged are the rows of ok an upsert found equal to the stored ones:
	// nothing was appended for them.
	unchanged int
	failed    listedFailures  // the answer.MaxListedFailures of the lowest index
	unlisted  int             // failures past them, counted
	warned    []ImportWarning // in the order the rows were acknowledged
}

type importInflight struct {
	row      importRow // without its bytes
	key      string
	size     int
	warnings []string
	future   *eventlog.Pending
}

// add decides one row and starts appending it, or records why it failed. It keeps
// no reference to row.raw.
func (im *importer) add(ctx context.Context, row importRow) {
	if row.size > im.w.rowLimit {
		im.fail(row, prefixKey(row.raw), TooLarge("the row", row.size, im.w.rowLimit))
		return
	}
	f, err := contract.DecodeFields(row.raw)
	if err != nil {
		im.fail(row, rawKey(row.raw), err)
		return
	}
	row.raw = nil
	key := f.Values.Key
	hash := maphash.String(im.seed, key)
	earlier, dup := im.seen[hash]
	if dup {
		// The later row meets the earlier one (upsert: replaces it; else: fails with
		// exists): let the earlier be visible first. (Two keys of one hash, at odds
		// of one in 2^64, only cost this wait: the projection then decides.)
		if err := im.drain(ctx); err != nil {
			im.fail(row, key, err)
			return
		}
	}
	build := buildCreate(f)
	if im.upsert {
		build = unlessUnchanged(buildUpsert(key, f))
	}
	p, err := im.w.prepare(key, build)
	if errors.Is(err, errUnchanged) {
		im.seen[hash] = row.index
		im.ok++
		im.unchanged++
		return
	}
	if dup && errors.Is(err, ErrExists) {
		im.failMsg(row, key, importRepeatedMessage(key, earlier), "")
		return
	}
	if err != nil {
		im.fail(row, key, err)
		return
	}
	future, err := im.w.appendAsync(p)
	if err != nil {
		im.fail(row, key, err)
		return
	}
	im.seen[hash] = row.index
	size := len(p.event.Data)
	im.inflight = append(im.inflight, importInflight{row: row, key: key, size: size, warnings: p.warnings, future: future})
	im.bytes += size
	for len(im.inflight) >= importWindow || (im.bytes > importWindowBytes && len(im.inflight) > 1) {
		im.settle(ctx, im.inflight[0])
		im.inflight = im.inflight[1:]
	}
}

// settle waits for one append's acknowledgement and records its outcome.
func (im *importer) settle(ctx context.Context, in importInflight) {
	im.bytes -= in.size
	seq, err := im.w.awaitAsync(ctx, in.future)
	if err != nil {
		if hash := maphash.String(im.seed, in.key); im.seen[hash] == in.row.index {
			delete(im.seen, hash)
		}
		im.fail(in.row, in.key, err)
		return
	}
	im.ok++
	im.maxSeq = max(im.maxSeq, seq)
	for _, w := range in.warnings {
		im.warned = append(im.warned, ImportWarning{Index: in.row.index, Line: in.row.line, Key: in.key, Warning: w})
	}
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
	msg := Message(WithKey(key, err))
	if errors.Is(err, ErrExists) {
		msg = importExistsMessage(key)
	}
	im.failMsg(row, key, msg, how)
}

func (im *importer) failMsg(row importRow, key, msg, how string) {
	f := ImportFailure{Index: row.index, Line: row.line, Key: key, Error: msg, HowToFix: how}
	if len(im.failed) < answer.MaxListedFailures {
		heap.Push(&im.failed, f)
		return
	}
	// Full. A row is found failed when it is read, or when its append is
	// acknowledged up to importWindow rows later: a failure found now can come
	// before a listed one. The list keeps the lowest indexes.
	im.unlisted++
	if f.Index < im.failed[0].Index {
		im.failed[0] = f
		heap.Fix(&im.failed, 0)
	}
}

// listedFailures is a heap of failures, the highest index first.
type listedFailures []ImportFailure

func (h listedFailures) Len() int           { return len(h) }
func (h listedFailures) Less(i, j int) bool { return h[i].Index > h[j].Index }
func (h listedFailures) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *listedFailures) Push(x any)        { *h = append(*h, x.(ImportFailure)) }
func (h *listedFailures) Pop() any {
	old := *h
	f := old[len(old)-1]
	*h = old[:len(old)-1]
	return f
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
