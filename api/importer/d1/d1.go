// Package d1 reads the directory table of the system capdir's row format comes
// from, as Cloudflare D1 or SQLite holds it, into row objects for the directory
// import (POST /api/directory/import): what `wrangler d1 execute --json
// --command "SELECT * FROM directory"` prints, a SQLite database file, or a
// `wrangler d1 export` SQL dump.
//
// Each row comes out as one JSON object of its columns, with SQL NULL columns left
// out so that the column defaults apply; the import validates it like any other
// row. Columns that are not among the eighteen are left out and named in
// Result.Ignored.
//
// # Caveats
//
// A SQL dump runs in an in-memory SQLite database that may attach no other
// database, so a dump can neither read nor write files; it is read whole, at
// most MaxDumpBytes.
package d1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/capdir/capdir/contract"
)

// Columns are the eighteen columns of the directory table, in its order.
var Columns = contract.ColumnNames()

// Result is what a read found.
type Result struct {
	Rows    int      // rows passed on
	Ignored []string // columns that are not the directory's, left out of every row
}

// RowFunc takes one row object; an error stops the read and is returned.
type RowFunc func(row []byte) error

// ReadJSON reads the output of wrangler d1 execute --json: a JSON array of result
// objects {"results":[row, …],"success":true,"meta":{…}} (or one such object),
// streamed, and calls fn with each row. A result whose success is false is an
// error naming its message.
func ReadJSON(r io.Reader, fn RowFunc) (Result, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var res Result
	ignored := map[string]bool{}
	tok, err := dec.Token()
	if err != nil {
		return res, jsonErr("it is not JSON: %v", err)
	}
	switch tok {
	case json.Delim('['):
		for dec.More() {
			if err := readResult(dec, fn, &res, ignored); err != nil {
				return res, err
			}
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
			return res, jsonErr("the array of results is not closed with ]")
		}
	case json.Delim('{'):
		if err := readResultBody(dec, fn, &res, ignored); err != nil {
			return res, err
		}
	default:
		return res, jsonErr("it starts with %v, not the array of results wrangler d1 execute --json prints", tok)
	}
	if _, err := dec.Token(); err != io.EOF {
		return res, jsonErr("it holds more than the one array of results wrangler d1 execute --json prints: found trailing data")
	}
	res.Ignored = sortedSet(ignored)
	return res, nil
}

// readResult reads one result object.
func readResult(dec *json.Decoder, fn RowFunc, res *Result, ignored map[string]bool) error {
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return jsonErr("an element of the array is not a result object")
	}
	return readResultBody(dec, fn, res, ignored)
}

// readResultBody reads a result object's members after its '{'.
func readResultBody(dec *json.Decoder, fn RowFunc, res *Result, ignored map[string]bool) error {
	success, msg := true, ""
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return jsonErr("%v", err)
		}
		switch tok {
		case "results":
			if err := readRows(dec, fn, res, ignored); err != nil {
				return err
			}
		case "success":
			if err := dec.Decode(&success); err != nil {
				return jsonErr("success is not a boolean")
			}
		case "error":
			var v any
			dec.Decode(&v)
			msg = fmt.Sprint(v)
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return jsonErr("%v", err)
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return jsonErr("%v", err)
	}
	if !success {
		return &QueryFailedError{Message: msg}
	}
	return nil
}

// readRows reads a results array, one row at a time.
func readRows(dec *json.Decoder, fn RowFunc, res *Result, ignored map[string]bool) error {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return jsonErr("results is not an array")
	}
	for dec.More() {
		var row map[string]any
		if err := dec.Decode(&row); err != nil {
			return jsonErr("row %d is not an object: %v", res.Rows, err)
		}
		if err := emit(row, fn, res, ignored); err != nil {
			return err
		}
	}
	_, err := dec.Token()
	return err
}

// emit passes row on without its NULL and unknown columns.
func emit(row map[string]any, fn RowFunc, res *Result, ignored map[string]bool) error {
	for k, v := range row {
		switch {
		case !slices.Contains(Columns, k):
			ignored[k] = true
			delete(row, k)
		case v == nil:
			delete(row, k)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(row); err != nil {
		return err
	}
	res.Rows++
	return fn(bytes.TrimRight(buf.Bytes(), "\n"))
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
