// Package jsonone decodes exactly one JSON value from a stream: a value followed
// by anything but white space (a stray "}", a second value, a word) is refused.
// json.Decoder.More alone does not tell: it reports false at a stray "}" or "]",
// so "{…}}" would pass for one object.
package jsonone

import (
	"encoding/json"
	"errors"
	"io"
)

// ErrTrailingData: something other than white space follows the value.
var ErrTrailingData = errors.New("found trailing data")

// Decode decodes one value from dec into v, then requires the stream to end: a
// second Decode must return io.EOF. An error of the first decode is returned as
// it is (io.EOF for an empty stream); after the value, a read error that is not
// JSON's (an *http.MaxBytesError, say) is returned as it is, and anything else
// is ErrTrailingData.
func Decode(dec *json.Decoder, v any) error {
	if err := dec.Decode(v); err != nil {
		return err
	}
	var rest json.RawMessage
	err := dec.Decode(&rest)
	var syntax *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err == nil, errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF):
		return ErrTrailingData
	}
	return err
}
