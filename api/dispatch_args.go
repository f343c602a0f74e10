package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// dispatchArgs is the "body" of a POST /api/dispatch: a string of pipe-separated
// arguments (Pipe), or, for a row with input_schema, one JSON object of named
// arguments (Args), which the gate validates as it is and runs as its pipe form.
// Any other JSON value is refused with the sentence for "body".
type dispatchArgs struct {
	Pipe string
	Args json.RawMessage
}

// UnmarshalJSON takes a string, an object, or null (no arguments).
func (d *dispatchArgs) UnmarshalJSON(b []byte) error {
	t := bytes.TrimSpace(b)
	switch {
	case len(t) > 0 && t[0] == '"':
		return json.Unmarshal(t, &d.Pipe)
	case len(t) > 0 && t[0] == '{':
		d.Args = append(json.RawMessage(nil), t...)
		return nil
	case bytes.Equal(t, []byte("null")):
		return nil
	}
	kind := "number"
	if len(t) > 0 && t[0] == '[' {
		kind = "array"
	} else if len(t) > 0 && (t[0] == 't' || t[0] == 'f') {
		kind = "bool"
	}
	return &json.UnmarshalTypeError{Value: kind, Type: reflect.TypeFor[string]()} // the decoder names the field
}

// argsRefused is the answer to the owner's arguments object (nil for a pipe body)
// for a key whose row
// cannot take one (no row, or a row without input_schema): 400 with the sentence
// any "body" that is not a string gets, and nothing appended. A caller other than
// the owner must not learn from it which rows exist outside what it may call, so
// its object goes to the gate, which refuses it after its scope checks
// (REFUSED_INPUT).
func (s *Server) argsRefused(in dispatchBody, tok string) error {
	if in.Body.Args == nil || tok != "" {
		return nil
	}
	row, _, err := s.cfg.Projector.Row(in.Key)
	if err == nil && row.InputSchema != "" || err != nil && !errors.Is(err, projector.ErrNotFound) {
		return nil
	}
	return malformedDispatch(contract.PipeBodyRule + " (a JSON object of named arguments is for a row with input_schema)")
}

// dispatchStatus is the HTTP status of a dispatch answered with its receipt:
// 400 for arguments the row's input_schema refused (nothing ran), else 200.
func dispatchStatus(status string) int {
	if status == wire.StatusRefusedInput {
		return http.StatusBadRequest
	}
	return http.StatusOK
}
