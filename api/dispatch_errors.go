package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
)

// dispatchShapeHint is how a POST /api/dispatch body looks.
const dispatchShapeHint = `send {"key":"KEY","body":"arg1|arg2"} (optional "shape":true)`

// dispatchBodyError is the 400 message for a POST /api/dispatch body that does not
// decode: a sentence naming the field and what it must hold, never the decoder's
// Go type names.
func dispatchBodyError(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		switch te.Field {
		case "key":
			return `"key" must be a string naming a row, like "GREET"`
		case "body":
			return contract.PipeBodyRule
		case "shape":
			return `"shape" must be true or false`
		}
		return "the dispatch body must be a JSON object; " + dispatchShapeHint
	case errors.As(err, &se):
		return fmt.Sprintf("malformed JSON at byte %d (%s); %s", se.Offset, se.Error(), dispatchShapeHint)
	case errors.Is(err, io.EOF):
		return "empty body; " + dispatchShapeHint
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the body ends before its JSON object is closed; " + dispatchShapeHint
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return strings.TrimPrefix(err.Error(), "json: ") + `: a dispatch body has only "key", "body" and "shape"`
	}
	return "malformed dispatch body: " + err.Error() + "; " + dispatchShapeHint
}

// unknownKeyAnswer is the 404 of a dispatch to a key no row has: the refusal the
// worker wrote (error, attempted, did_you_mean, ran) with the invocation id and
// trace of its receipt.
func unknownKeyAnswer(rc *eventlog.Receipt) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	if json.Unmarshal([]byte(rc.Result), &m) != nil {
		m = map[string]json.RawMessage{"error": json.RawMessage(`"unknown_key"`), "ran": json.RawMessage(`false`)}
	}
	m["invocation_id"], _ = json.Marshal(rc.InvocationID)
	m["trace"], _ = json.Marshal(rc.Trace)
	return m
}

// malformedDispatchError is a dispatch body that does not decode: its message is
// the sentence for the caller, and it matches errMalformedDispatch.
type malformedDispatchError struct{ msg string }

func (e *malformedDispatchError) Error() string { return e.msg }
func (e *malformedDispatchError) Unwrap() error { return errMalformedDispatch }

func malformedDispatch(msg string) error { return &malformedDispatchError{msg} }
