package console

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/capdir/capdir/api"
	"github.com/capdir/capdir/command"
)

// The literals the console itself shows. A refused change shows the API's own
// answer (api.ErrorAnswer); these are the console's sign-in and CSRF refusals.
const (
	// msgCSRF answers a state-changing request without its session's CSRF token.
	msgCSRF = `{"error":"csrf_refused","how_to_fix":"reload the page and send the form again: the request did not carry this session's CSRF token"}`
	// msgCrossOrigin answers a state-changing request from another origin.
	msgCrossOrigin = `{"error":"csrf_refused","how_to_fix":"the console accepts changes only from its own pages (the request's Origin is another site)"}`
	// msgSignedOut answers a request of a live script or a change without a session.
	msgSignedOut = `{"error":"unauthorized","how_to_fix":"sign in at /console/signin with the owner key"}`
	// msgNoKey answers a sign-in without a key.
	msgNoKey = "Enter the owner key (the value of CAPDIR_TERMINAL_KEY, or the data dir's terminal.key)."
)

// msgRateLimited answers a sign-in from an address that sent too many wrong keys.
func msgRateLimited(limit int, window, retry time.Duration) string {
	return fmt.Sprintf(`{"error":"too_many_sign_ins","how_to_fix":"%d wrong keys from this address within %v: wait %v, then sign in with the owner key"}`,
		limit, window, retry)
}

// badQuery is a console request whose query or form says what to fix; the API's
// 400 family answers it.
func badQuery(msg string) error { return fmt.Errorf("%w: %s", api.ErrBadQuery, msg) }

// badForm is a state-changing request whose body is no form of at most maxForm
// bytes: the API's 413 or 400.
func badForm(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return fmt.Errorf("%w: the form is over %d bytes", command.ErrPayloadTooLarge, mbe.Limit)
	}
	return badQuery("the body is not a form: " + err.Error())
}

// unavailable is a failed read of the projection.
func unavailable(err error) error { return fmt.Errorf("%w: %w", command.ErrUnavailable, err) }
