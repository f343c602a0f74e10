package httprunner

import (
	"errors"
	"strconv"
	"time"

	"github.com/capdir/capdir/dispatcher/runner"
)

// Sentinel errors of the http runner; every "ERR:http:..." literal is built below.
var (
	// ErrBadTarget: the http target does not render to "METHOD url".
	ErrBadTarget = errors.New("http: bad target")
	// ErrAuth: applying the row's credential failed.
	ErrAuth = errors.New("http: auth")
	// ErrStatus: the upstream answered 4xx or 5xx.
	ErrStatus = errors.New("http: upstream status")
	// ErrFetch: DNS, TLS or connection failure.
	ErrFetch = errors.New("http: fetch failed")
	// ErrTimeout: the upstream did not answer within the configured timeout.
	ErrTimeout = errors.New("http: timeout")
	// ErrResponseTooLarge: the upstream body exceeded the response cap.
	ErrResponseTooLarge = errors.New("http: response too large")
	// ErrOriginBusy: as many calls as Config.MaxPerOrigin allows were in flight to
	// the target's origin; nothing was sent.
	ErrOriginBusy = errors.New("http: origin busy")
	// ErrOriginChanged: a call of a row with auth would go to an origin other than
	// the literal origin of the row's target; nothing was sent.
	ErrOriginChanged = errors.New("http: origin changed")
	// ErrRedirectOffOrigin: the upstream redirected a call that carries a credential
	// to another origin; the redirect was not followed.
	ErrRedirectOffOrigin = errors.New("http: redirect off origin")
)

func errBadTarget(msg string) *runner.Error {
	return runner.NewError(ErrBadTarget, "ERR:http:bad_target:"+msg)
}

// errAuth wraps an auth failure as ERR:http:<KEY>:ERR:auth:unknown_prefix:<prefix>.
func errAuth(key string, err error) *runner.Error {
	return &runner.Error{Kind: errors.Join(ErrAuth, err), Text: "ERR:http:" + key + ":" + err.Error()}
}

func errStatus(status int, body string) *runner.Error {
	return runner.NewError(ErrStatus, "ERR:http:"+strconv.Itoa(status)+":"+body)
}

func errFetch(msg string) *runner.Error {
	return runner.NewError(ErrFetch, "ERR:http:fetch:"+msg)
}

func errTimeout(d time.Duration) *runner.Error {
	return runner.NewError(ErrTimeout, "ERR:http:timeout:"+d.String())
}

// errResponseTooLarge matches runner.ErrResultTooLarge too: it is the http runner's
// result cap, under the name its literal has always had.
func errResponseTooLarge(limit int64) *runner.Error {
	return &runner.Error{
		Kind: errors.Join(ErrResponseTooLarge, runner.ErrResultTooLarge),
		Text: "ERR:http:response_too_large:" + strconv.FormatInt(limit, 10),
	}
}

// errRedirectOffOrigin is ERR:http:redirect_off_origin:<location>, the location
// without its user info, query and fragment.
func errRedirectOffOrigin(location string) *runner.Error {
	return runner.NewError(ErrRedirectOffOrigin, "ERR:http:redirect_off_origin:"+location)
}

// errOther is ERR:http:<message> for a build failure of no known kind.
func errOther(err error) *runner.Error {
	return &runner.Error{Kind: err, Text: "ERR:http:" + err.Error()}
}

// errOriginBusy is ERR:http:origin_busy:<origin>:<max>.
func errOriginBusy(origin string, limit int) *runner.Error {
	return runner.NewError(ErrOriginBusy, "ERR:http:origin_busy:"+origin+":"+strconv.Itoa(limit))
}

// errOriginChanged is ERR:http:origin_changed:<want>!=<got>: the literal origin of
// the row's target, and the origin the call's URL has.
func errOriginChanged(want, got string) *runner.Error {
	return runner.NewError(ErrOriginChanged, "ERR:http:origin_changed:"+want+"!="+got)
}
