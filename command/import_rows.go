package command

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"os"

	"github.com/capdir/capdir/contract"
)

// importRow is one row of an import body, undecoded.
type importRow struct {
	index, line int
	size        int64  // the row's length in bytes
	raw         []byte // the row; when size is over the row limit, only its first bytes
}

// rowSource yields an import body's rows one at a time, in order; next returns
// io.EOF after the last. A row's raw bytes are valid until the next call.
type rowSource interface {
	next() (importRow, error)
}

// importSyntax is a malformed-JSON error of the import body as a whole.
func importSyntax(format string, args ...any) error {
	return fmt.Errorf("%w: the body starts with '[' but is not a well-formed JSON array (%s); nothing was imported",
		contract.ErrMalformedJSON, fmt.Sprintf(format, args...))
}

// isNDJSON reports whether a content type names NDJSON.
func isNDJSON(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines", "application/jsonlines":
		return true
	}
	return false
}

// sniffImport skips the body's leading whitespace and tells its form: an array when
// the first other byte is '[' (and the content type does not say NDJSON), NDJSON
// otherwise. lines is how many newlines it skipped. An empty body is an error.
func sniffImport(br *bufio.Reader, contentType string) (array bool, lines int, err error) {
	for {
		c, err := br.ReadByte()
		switch {
		case err == io.EOF:
			return false, 0, fmt.Errorf("%w: empty body; send a JSON array of row objects, or NDJSON (one row object per line)", contract.ErrMalformedJSON)
		case err != nil:
			return false, 0, err
		case c == '\n':
			lines++
		case c == ' ', c == '\t', c == '\r':
		default:
			br.UnreadByte()
			return c == '[' && !isNDJSON(contentType), lines, nil
		}
	}
}

// ndjsonRows reads NDJSON: every line that is not blank is a row. A line over the
// row limit is read to its end but only its first limit bytes are kept.
type ndjsonRows struct {
	br    *bufio.Reader
	limit int64
	line  int // lines read so far
	index int // rows returned so far
	buf   []byte
	atEOF bool
}

func (s *ndjsonRows) next() (importRow, error) {
	for !s.atEOF {
		size, err := s.readLine()
		switch {
		case err == io.EOF:
			s.atEOF = true
			if size == 0 {
				return importRow{}, io.EOF
			}
		case err != nil:
			return importRow{}, err
		}
		s.line++
		raw := s.buf
		if size <= s.limit {
			if raw = bytes.TrimSpace(raw); len(raw) == 0 {
				continue
			}
			size = int64(len(raw))
		}
		s.index++
		return importRow{index: s.index - 1, line: s.line, size: size, raw: raw}, nil
	}
	return importRow{}, io.EOF
}

// readLine reads one line into s.buf (at most limit bytes of it, without the
// newline) and returns its whole length.
func (s *ndjsonRows) readLine() (int64, error) {
	s.buf = s.buf[:0]
	var size int64
	for {
		chunk, err := s.br.ReadSlice('\n')
		if err == nil {
			chunk = chunk[:len(chunk)-1]
		}
		size += int64(len(chunk))
		if room := s.limit - int64(len(s.buf)); room > 0 {
			s.buf = append(s.buf, chunk[:min(int64(len(chunk)), room)]...)
		}
		if err != bufio.ErrBufferFull {
			return size, err
		}
	}
}

// arrayRows reads the elements of a JSON array one at a time. It finds where each
// element ends by its brackets and strings alone; the caller checks an element's
// own syntax. An element over the row limit is read to its end but only its first
// limit bytes are kept.
type arrayRows struct {
	br    *bufio.Reader
	limit int64
	state int // arrayStart, arrayNext, arrayDone
	index int
	buf   []byte
}

const (
	arrayStart = iota // before '['
	arrayNext         // after '[' or an element
	arrayDone         // after ']'
)

func (s *arrayRows) next() (importRow, error) {
	switch s.state {
	case arrayDone:
		return importRow{}, io.EOF
	case arrayStart:
		c, err := s.skipSpace()
		if err != nil {
			return importRow{}, err
		}
		if c != '[' {
			return importRow{}, importSyntax("it does not start with '['")
		}
		if c, err = s.skipSpace(); err != nil {
			return importRow{}, err
		}
		if c == ']' {
			return importRow{}, s.end()
		}
		s.br.UnreadByte()
	default:
		c, err := s.skipSpace()
		switch {
		case err != nil:
			return importRow{}, err
		case c == ']':
			return importRow{}, s.end()
		case c != ',':
			return importRow{}, importSyntax("expected ',' or ']' after element %d, found %q", s.index-1, c)
		}
		if _, err := s.skipSpace(); err != nil {
			return importRow{}, err
		}
		s.br.UnreadByte()
	}
	s.state = arrayNext
	row, err := s.element()
	if err == nil {
		s.index++
	}
	return row, err
}

// end checks that nothing but whitespace follows the closing ']'.
func (s *arrayRows) end() error {
	s.state = arrayDone
	c, err := s.skipSpace()
	if err == nil {
		return importSyntax("%q after the closing ']'", c)
	}
	return err // io.EOF: the end
}

// skipSpace returns the next byte that is not JSON whitespace. The body ending
// inside the array is a syntax error; ending after it is io.EOF.
func (s *arrayRows) skipSpace() (byte, error) {
	for {
		c, err := s.br.ReadByte()
		if err == io.EOF && s.state != arrayDone {
			return 0, importSyntax("the body ends before the array's closing ']'")
		}
		if err != nil {
			return 0, err
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c, nil
		}
	}
}

// element reads one element: an object, array or string to its closing byte, or a
// number or literal up to the ',' , ']' or whitespace after it.
func (s *arrayRows) element() (importRow, error) {
	s.buf = s.buf[:0]
	var size int64
	depth, inString, escaped := 0, false, false
	for {
		c, err := s.br.ReadByte()
		if err == io.EOF {
			return importRow{}, importSyntax("the body ends inside element %d", s.index)
		}
		if err != nil {
			return importRow{}, err
		}
		done := false
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
				done = depth == 0
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth == 0 { // the array's ']' after a number or literal
				s.br.UnreadByte()
				return s.row(size)
			}
			depth--
			done = depth == 0
		case depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			s.br.UnreadByte()
			return s.row(size)
		}
		size++
		if int64(len(s.buf)) < s.limit {
			s.buf = append(s.buf, c)
		}
		if done {
			return s.row(size)
		}
	}
}

func (s *arrayRows) row(size int64) (importRow, error) {
	if size == 0 {
		return importRow{}, importSyntax("element %d is empty", s.index)
	}
	return importRow{index: s.index, size: size, raw: s.buf}, nil
}

// spoolArray copies an array body to a temporary file in dir while it checks the
// body's JSON syntax, so that a malformed array is refused before any row of it is
// written, without holding the body in memory. It returns the file's rows; close
// removes the file. Errors: contract.ErrMalformedJSON, ErrUnavailable (the file),
// or the body's read error.
func spoolArray(body *bufio.Reader, dir string, limit int64) (rows rowSource, close func(), err error) {
	f, err := os.CreateTemp(dir, "capdir-import-*.json")
	if err != nil {
		return nil, nil, Unavailable(fmt.Errorf("spooling the import: %v", err))
	}
	name := f.Name()
	os.Remove(name) // gone from the directory at once where the system allows it
	close = func() {
		f.Close()
		os.Remove(name)
	}
	fw := bufio.NewWriterSize(spoolWriter{f}, 64<<10)
	check := &arrayRows{br: bufio.NewReaderSize(io.TeeReader(body, fw), 64<<10), limit: limit}
	for {
		row, err := check.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			close()
			return nil, nil, err
		}
		if row.size <= limit && !json.Valid(row.raw) {
			close()
			return nil, nil, importSyntax("element %d: %v", row.index, json.Unmarshal(row.raw, new(json.RawMessage)))
		}
	}
	if err := fw.Flush(); err != nil {
		close()
		return nil, nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		close()
		return nil, nil, Unavailable(fmt.Errorf("spooling the import: %v", err))
	}
	return &arrayRows{br: bufio.NewReaderSize(f, 64<<10), limit: limit}, close, nil
}

// spoolWriter marks the spool file's write errors as the node's, not the body's.
type spoolWriter struct{ f *os.File }

func (w spoolWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		err = Unavailable(fmt.Errorf("spooling the import: %v", err))
	}
	return n, err
}

// prefixKey is the "key" member of a row of which only the first bytes were kept,
// when they show it.
func prefixKey(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return ""
		}
		if t == "key" {
			v, _ := dec.Token()
			s, _ := v.(string)
			return s
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}
