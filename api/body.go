package api

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/capdir/capdir/contract"
)

// readBody reads a whole request body of at most limit bytes. what names the body in
// messages ("the row", "the request body"). A body declared larger than limit is
// refused before a byte of it is read.
//
// Errors: errPayloadTooLarge (over limit), errBodyTimeout (the body stopped arriving
// before the server's read timeout), or contract.ErrMalformedJSON (any other read
// failure).
func readBody(w http.ResponseWriter, r *http.Request, limit int64, what string) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, tooLarge(what, r.ContentLength, limit)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return nil, bodyError(err, what, r.ContentLength, limit)
	}
	return body, nil
}

// bodyError classifies an error met reading a request body capped at limit bytes
// by http.MaxBytesReader; declared is the request's Content-Length (-1 unknown).
func bodyError(err error, what string, declared, limit int64) error {
	var over *http.MaxBytesError
	switch {
	case errors.As(err, &over):
		return tooLarge(what, declared, over.Limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("%w: %s stopped arriving before the server's read timeout (capdir serve --http-read-timeout); nothing more of it was read; send it without pauses", errBodyTimeout, what)
	}
	return fmt.Errorf("%w: reading %s: %v", contract.ErrMalformedJSON, what, err)
}

// tooLarge is the payload_too_large error of a body or row of size bytes (size
// unknown when it is not over limit: the reader stopped at the limit).
func tooLarge(what string, size, limit int64) error {
	if size > limit {
		return fmt.Errorf("%w: %s is %d bytes; the limit is %d", errPayloadTooLarge, what, size, limit)
	}
	return fmt.Errorf("%w: %s is more than %d bytes; the limit is %d", errPayloadTooLarge, what, limit, limit)
}

// guardBody keeps a request whose body its handler left unread from holding the
// connection. Go's server, before it answers such a request, reads up to 256 KiB of
// the rest of the body so that the connection can be reused, and waits for it as
// long as the read timeout allows: a client that sent headers and part of a body
// could hold a handler that way. When the handler returns without having read the
// body to its end, the connection's read deadline is set to now: nothing more is
// read, the answer goes out at once with Connection: close, and the connection is
// closed after it.
func guardBody(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		orig := r.Body
		b := &trackedBody{ReadCloser: orig}
		r.Body = b
		h.ServeHTTP(w, r)
		r.Body = orig // the server looks at its own body type when it finishes
		if !b.eof {
			http.NewResponseController(w).SetReadDeadline(time.Now())
		}
	})
}

// trackedBody records whether a request body was read to its end.
type trackedBody struct {
	io.ReadCloser
	eof bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

// closeUnread marks an answer given without reading the request's body: the
// connection closes after it, so the server neither reads nor waits for the rest.
func closeUnread(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
	}
}
