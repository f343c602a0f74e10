package api

import (
	"encoding/json"
	"errors"
	"io"

	"github.com/capdir/capdir/internal/jsonone"
)

// errTrailingData refuses a body whose JSON object is followed by anything but
// white space ("{…}}", "{…} {…}", "{…}x").
var errTrailingData = errors.New("the body must hold exactly one JSON object: found trailing data")

// decodeOne decodes the one JSON object of a request body r into v, refusing a
// field v does not have (a map takes every field) and anything after the object
// (errTrailingData). Other errors are the decoder's or r's, as they are: io.EOF
// for an empty body, an *http.MaxBytesError past the body's bound.
func decodeOne(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	err := jsonone.Decode(dec, v)
	if errors.Is(err, jsonone.ErrTrailingData) {
		return errTrailingData
	}
	return err
}
