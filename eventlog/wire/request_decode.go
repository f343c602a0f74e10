package wire

import (
	"bytes"
	"math"

	"github.com/capdir/capdir/internal/jsonmember"
)

// RequestData decodes the event's data, an invocation request, into r as DataAs
// does. The form capdir writes (one object, each field once, its strings
// printable ASCII) is read by hand, its strings without escapes cut from one
// copy of the data instead of made one by one; anything else is left to DataAs. key, when the
// data spells it, is used as the request's key (the subject's, which the
// caller holds already), so that no string is made for it.
func (e *Event) RequestData(r *InvocationRequest, key string) error {
	if decodeRequest(e.Data, key, r) {
		return nil
	}
	// The general decoder decodes into a value of its own: it takes its target
	// through an interface, which would put r, and so every caller's request,
	// on the heap.
	var v InvocationRequest
	err := e.DataAs(&v)
	*r = v
	return err
}

// requestNames are the request's fields, as its data spells them.
var requestNames = []string{"invocation_id", "trace", "key", "body", "args", "shape", "credential", "token",
	"dir_seq", "parent", "depth", "chain", "traceparent", "tracestate"}

// decodeRequest fills r from data and reports whether it could. It gives up,
// for DataAs to decide, on what it would not read exactly as DataAs does: data
// that is not one object; a member name with an escape or a byte outside
// printable ASCII, or a field's name in another case; a field given twice, or a
// value of another type than its own (null included); a string with a byte
// outside printable ASCII or an escape of a character beyond it; a number that is not plain digits (or
// beyond its field's range); arguments that are not an object or an array.
// Other members are skipped, as DataAs skips them: data read from the log is
// valid JSON (decode checks it), the only data this reads.
func decodeRequest(data []byte, key string, r *InvocationRequest) bool {
	var text string // data as one string, made for the first string that needs it
	str := func(v []byte, same string) (string, bool) {
		t, ok := jsonmember.Text(v)
		switch {
		case !ok:
			return jsonmember.Unescaped(v) // made on its own
		case len(t) == 0:
			return "", true
		case same != "" && string(t) == same:
			return same, true
		}
		if text == "" {
			text = string(data)
		}
		at := cap(data) - cap(t) // t is data[at:at+len(t)]
		return text[at : at+len(t)], true
	}
	return jsonmember.Fields(data, requestNames, func(name, v []byte) (field int, ok bool) {
		switch string(name) {
		case "invocation_id":
			r.InvocationID, ok = str(v, "")
			return 0, ok
		case "trace":
			r.Trace, ok = str(v, "")
			return 1, ok
		case "key":
			r.Key, ok = str(v, key)
			return 2, ok
		case "body":
			r.Body, ok = str(v, "")
			return 3, ok
		case "args":
			if len(v) == 0 || (v[0] != '{' && v[0] != '[') {
				return 4, false
			}
			r.Args = bytes.Clone(v)
			return 4, true
		case "shape":
			switch string(v) {
			case "true":
				r.Shape = true
			case "false":
				r.Shape = false
			default:
				return 5, false
			}
			return 5, true
		case "credential":
			r.Credential, ok = str(v, OwnerActor)
			return 6, ok
		case "token":
			r.Token, ok = str(v, "")
			return 7, ok
		case "dir_seq":
			r.DirSeq, ok = jsonmember.Uint(v)
			return 8, ok
		case "parent":
			r.Parent, ok = str(v, "")
			return 9, ok
		case "depth":
			var n uint64
			if n, ok = jsonmember.Uint(v); !ok || n > math.MaxInt {
				return 10, false
			}
			r.Depth = int(n)
			return 10, true
		case "chain":
			r.Chain, ok = str(v, "")
			return 11, ok
		case "traceparent":
			r.Traceparent, ok = str(v, "")
			return 12, ok
		case "tracestate":
			r.Tracestate, ok = str(v, "")
			return 13, ok
		}
		return -1, false
	})
}
