package jsonone_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/jsonone"
)

// One value, with white space around it, decodes; a stray closing bracket, a
// second value, a word or half a value after it is ErrTrailingData; an empty
// stream is io.EOF; a read error after the value is the reader's.
func TestDecode(t *testing.T) {
	for _, c := range []struct {
		in   string
		want error
	}{
		{`{"a":1}`, nil},
		{" \n{\"a\":1}\r\n\t ", nil},
		{`{"a":1}}`, jsonone.ErrTrailingData},
		{`{"a":1}]`, jsonone.ErrTrailingData},
		{`{"a":1} {"a":2}`, jsonone.ErrTrailingData},
		{`{"a":1}x`, jsonone.ErrTrailingData},
		{`{"a":1} {`, jsonone.ErrTrailingData},
		{`{"a":1}1`, jsonone.ErrTrailingData},
		{``, io.EOF},
		{`  `, io.EOF},
	} {
		var v map[string]int
		if err := jsonone.Decode(json.NewDecoder(strings.NewReader(c.in)), &v); !errors.Is(err, c.want) {
			t.Errorf("%q: %v, want %v", c.in, err, c.want)
		}
	}
	r := http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader(`{"a":1}`+strings.Repeat(" ", 100))), 50)
	var v map[string]int
	var tooBig *http.MaxBytesError
	if err := jsonone.Decode(json.NewDecoder(r), &v); !errors.As(err, &tooBig) {
		t.Errorf("white space past the reader's limit: %v, want the reader's *http.MaxBytesError", err)
	}
}
