package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/capdir/capdir/internal/editdist"
)

// Fields is a decoded request body: the values of the row fields it named, and which
// fields those were. Absent fields hold zero values in Values; use Has to tell
// "absent" from "present and empty". Create and Replace fill absent fields with the
// column defaults; Patch touches only present, allow-listed fields.
//
// The read-only fields updated_at, created_at and row_num are recorded as present
// (so Names reports them) but their values are discarded: the server sets them.
type Fields struct {
	Values  Row
	present uint32 // bit i set: columns[i] was in the body
}

// FieldsFromRow returns Fields naming every writable column of r, as if r had been
// sent as a whole-row body. Useful for imports: Create(FieldsFromRow(r), now).
func FieldsFromRow(r Row) Fields {
	f := Fields{}
	for i, c := range columns {
		if c.kind == kindReadOnly {
			continue
		}
		copyColumn(i, &f.Values, &r)
		f.present |= 1 << i
	}
	return f
}

// Has reports whether the body named the field (by its JSON name).
func (f Fields) Has(name string) bool {
	i, ok := columnIndex[name]
	return ok && f.present&(1<<i) != 0
}

// Names returns the JSON names of the fields the body named, in column order
// (key, type, target, auth, content, updated_at, category, …, created_at, row_num).
func (f Fields) Names() []string {
	var names []string
	for i, c := range columns {
		if f.present&(1<<i) != 0 {
			names = append(names, c.name)
		}
	}
	return names
}

// DecodeFields parses a JSON object of row fields strictly.
//
// Text fields take a string or null (null means empty); examples also takes a JSON
// array of strings, stored as its canonical JSON text (["a","b"] and "[\"a\",\"b\"]"
// are one value). enabled, planner_visible and
// sensitive take a JSON integer or true/false (stored as 1/0). planner_rank takes a
// JSON integer; seq takes a JSON integer or null. updated_at, created_at and row_num
// are accepted with any value and ignored, so a row read by GET can be PUT back.
//
// Malformed JSON wraps ErrMalformedJSON. Every field problem (unknown name, wrong JSON
// type) is a *ValidationError naming the field and the expected type; all of them are
// returned together, joined with errors.Join, in body order.
func DecodeFields(data []byte) (Fields, error) {
	var f Fields
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()

	tok, err := dec.Token()
	if err != nil {
		return Fields{}, malformed(err, data)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return Fields{}, fmt.Errorf("%w: the body must be a JSON object of row fields such as {\"key\":\"NOW\",\"type\":\"fn\"}, got %s",
			ErrMalformedJSON, describeToken(tok))
	}
	var problems []error
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return Fields{}, malformed(err, data)
		}
		name := tok.(string) // inside an object the decoder only yields string keys
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return Fields{}, malformed(err, data)
		}
		i, ok := columnIndex[name]
		if !ok {
			problems = append(problems, unknownField(name))
			continue
		}
		if err := decodeColumn(i, raw, &f.Values); err != nil {
			problems = append(problems, err)
			continue
		}
		f.present |= 1 << i
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return Fields{}, malformed(err, data)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Fields{}, fmt.Errorf("%w: unexpected data after the closing } of the object", ErrMalformedJSON)
	}
	if len(problems) > 0 {
		return Fields{}, errors.Join(problems...)
	}
	return f, nil
}

// malformed is the ErrMalformedJSON of a decode of data that failed with err.
func malformed(err error, data []byte) error {
	if err == io.EOF && len(bytes.TrimSpace(data)) == 0 {
		return fmt.Errorf("%w: empty body; send a JSON object of row fields such as {\"key\":\"NOW\",\"type\":\"fn\"}", ErrMalformedJSON)
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%w: the body ends at byte %d, before the JSON object is closed", ErrMalformedJSON, len(data))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("%w: %s (at byte %d)", ErrMalformedJSON, se.Error(), se.Offset)
	}
	return fmt.Errorf("%w: %s", ErrMalformedJSON, err.Error())
}

// decodeColumn decodes raw into column i of r.
func decodeColumn(i int, raw json.RawMessage, r *Row) error {
	c := columns[i]
	s := string(raw)
	switch c.kind {
	case kindReadOnly:
		return nil
	case kindList:
		if strings.HasPrefix(s, "[") {
			return decodeList(c, raw, r)
		}
		// A string holding an array is stored as that array would be; any other
		// string is stored as sent, for validation to judge.
		var text string
		if json.Unmarshal(raw, &text) == nil && decodeList(c, json.RawMessage(text), r) == nil {
			return nil
		}
		fallthrough
	case kindText:
		if s == "null" {
			*c.text(r) = ""
			return nil
		}
		if err := json.Unmarshal(raw, c.text(r)); err != nil {
			return fieldErr(ErrWrongType, c.name, "must be a JSON string (or null), got %s", describeRaw(raw))
		}
		return nil
	case kindFlag:
		switch s {
		case "true":
			*c.num(r) = 1
			return nil
		case "false":
			*c.num(r) = 0
			return nil
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return fieldErr(ErrWrongType, c.name, "must be 0 or 1 (a JSON number, or true/false), got %s", describeRaw(raw))
		}
		*c.num(r) = n
		return nil
	case kindInt:
		n, err := strconv.Atoi(s)
		if err != nil {
			return fieldErr(ErrWrongType, c.name, "must be an integer (a JSON number such as 100), got %s", describeRaw(raw))
		}
		*c.num(r) = n
		return nil
	case kindSeq:
		if s == "null" {
			r.Seq = nil
			return nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fieldErr(ErrWrongType, c.name, "must be an integer or null, got %s", describeRaw(raw))
		}
		r.Seq = &n
		return nil
	}
	panic("contract: unhandled column kind")
}

// decodeList stores a JSON array of strings in column c as its canonical JSON
// text: compact, HTML characters not escaped.
func decodeList(c column, raw json.RawMessage, r *Row) error {
	var items []*string
	if err := json.Unmarshal(raw, &items); err != nil || slices.Contains(items, nil) {
		return fieldErr(ErrWrongType, c.name, "must be a JSON array of strings (or a string holding one), got %s", describeRaw(raw))
	}
	list := make([]string, len(items))
	for i, it := range items {
		list[i] = *it
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(list); err != nil {
		return fieldErr(ErrWrongType, c.name, "cannot be stored: %v", err)
	}
	*c.text(r) = strings.TrimSuffix(b.String(), "\n")
	return nil
}

func unknownField(name string) error {
	hint := ""
	if s := closest(name); s != "" {
		hint = fmt.Sprintf("did you mean %q? ", s)
	}
	return fieldErr(ErrUnknownField, name, "unknown field; %sthe fields of a row are %s",
		hint, strings.Join(fieldNames(), ", "))
}

// closest returns the field name within edit distance 2 of name, or "".
func closest(name string) string {
	best, bestD := "", 3
	for _, col := range columns {
		if d := editdist.Bounded(strings.ToLower(name), col.name, 2); d < bestD {
			best, bestD = col.name, d
		}
	}
	return best
}

// describeRaw names the JSON type of raw and shows (a prefix of) its text.
func describeRaw(raw json.RawMessage) string {
	s := string(raw)
	t := "number"
	switch {
	case s == "null":
		return "null"
	case s == "true" || s == "false":
		return "boolean " + s
	case strings.HasPrefix(s, `"`):
		t = "string"
	case strings.HasPrefix(s, "{"):
		t = "object"
	case strings.HasPrefix(s, "["):
		t = "array"
	}
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return t + " " + s
}

func describeToken(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	default:
		return fmt.Sprintf("%T", v)
	}
}
