package api

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/capdir/capdir/command"
	"github.com/capdir/capdir/contract"
)

// readBody reads a whole request body of at most limit bytes. what names the body in
// messages ("the row", "the request body"). A body declared larger than limit is
// refused before a byte of it is read.
//
// Errors: ErrPayloadTooLarge (over limit), ErrBodyTimeout (the body stopped arriving
// before the server's read timeout), or contract.ErrMalformedJSON (any other read
// failure).
func readBody(w http.ResponseWriter, r *http.Request, limit int64, what string) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, command.TooLarge(what, r.ContentLength, limit)
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
		return command.TooLarge(what, declared, over.Limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("%w: %s stopped arriving before the server's read timeout (capdir serve --http-read-timeout); nothing more of it was read; send it without pauses", ErrBodyTimeout, what)
	}
	return fmt.Errorf("%w: reading %s: %v", contract.ErrMalformedJSON, what, err)
}

// guardBody keeps a request whose body its handler left unread from holding the
// connection. Go's server, before it answers such a request, reads up to 256 KiB of
// the rest of the body so that the connection can be reused, and waits for it as
// long as the read timeout allows: a client that sent headers and part of a body
// could hold a handler that way. When the handler returns without having read the
// body to its end, the connection's read deadline is set to unreadLinger from now:
// the answer goes out at once with Connection: close, what of the body is already
// on its way is read and dropped for that moment at most, and the connection is
// closed after it.
//
// The linger keeps a client that is still sending a small body from losing the
// answer: closing a connection with unread data in it resets it, and a client
// whose write meets the reset reports a broken pipe instead of the 401 or 413 the
// server sent.
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
			http.NewResponseController(w).SetReadDeadline(time.Now().Add(unreadLinger))
		}
	})
}

// unreadLinger is how long the server goes on reading, and dropping, a body its
// handler left unread before it closes the connection (see guardBody): as long as
// net/http lingers after a body over a MaxBytesReader's limit.
const unreadLinger = 500 * time.Millisecond

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
