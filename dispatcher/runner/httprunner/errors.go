package httprunner

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/dispatcher/runner"
)

// Sentinel errors of the http runner, the kinds of its failure table's entries.
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

// The http runner's failures, most specific first. Each literal is built from
// its entry, here and nowhere else.
var (
	failBadTarget = failure.Entry{
		Literal: "ERR:http:bad_target:<message>", Kind: ErrBadTarget, Fault: failure.FaultRow,
		Cause: "the target does not render to METHOD url with an http or https URL",
		Fix:   "the owner writes the target as METHOD https://host/path",
	}
	failAuth = failure.Entry{
		Literal: "ERR:http:<KEY>:ERR:auth:…", Kind: ErrAuth, Fault: failure.FaultRow, Doc: failure.DocMalformedAuth,
		Cause: "auth is not bearer:, basic:, headers:, query: or oauth: with a variable name",
		Fix:   "the owner writes a supported form",
	}
	failOriginChanged = failure.Entry{
		Literal: "ERR:http:origin_changed:<want>!=<got>", Kind: ErrOriginChanged, Fault: failure.FaultRow,
		Cause: "a call of a row with auth would go to an origin other than the literal origin of its target; nothing was sent",
		Fix:   "the owner writes the target's scheme, host and port literally; only the path and query may take arguments",
	}
	failOriginBusy = failure.Entry{
		Literal: "ERR:http:origin_busy:<origin>:<max>", Kind: ErrOriginBusy, Fault: failure.FaultNode,
		Cause: "as many calls as --http-max-per-origin allows were in flight to the origin; nothing was sent",
		Fix:   "call again once the upstream answers; the operator may raise the bound",
	}
	failRedirectOffOrigin = failure.Entry{
		Literal: "ERR:http:redirect_off_origin:<location>", Kind: ErrRedirectOffOrigin, Fault: failure.FaultService,
		Cause: "the upstream redirected a call that carries a credential to another origin; the redirect was not followed",
		Fix:   "the owner points the target at the final URL",
	}
	failTimeout = failure.Entry{
		Literal: "ERR:http:timeout:<duration>", Kind: ErrTimeout, Fault: failure.FaultService,
		Cause: "the upstream did not answer within --http-timeout",
		Fix:   "check the upstream's health, then call again",
	}
	failFetch = failure.Entry{
		Literal: "ERR:http:fetch:<message>", Kind: ErrFetch, Fault: failure.FaultRow, Doc: failure.DocPlain,
		Cause: "DNS, TLS or connection failure",
		Fix:   "check the URL in target",
	}
	failResponseTooLarge = failure.Entry{
		Literal: "ERR:http:response_too_large:<cap>", Kind: errors.Join(ErrResponseTooLarge, runner.ErrResultTooLarge), Fault: failure.FaultService,
		Cause: "the upstream's answer is over the result cap; it is refused whole, never cut",
		Fix:   "ask for less (a narrower query, a page), or the operator raises the cap",
	}
	failUnauthorized = failure.Entry{
		Literal: "ERR:http:401:<body>", Kind: ErrStatus, Fault: failure.FaultService, Doc: failure.DocCredential,
		Cause: "the credential is set but the upstream refuses it",
		Fix:   "rotate the secret; the row is fine",
	}
	failStatus = failure.Entry{
		Literal: "ERR:http:<status>:<body>", Kind: ErrStatus, Fault: failure.FaultCall, Doc: failure.DocPlain,
		Cause: "the upstream refused the call",
		Fix:   "check the arguments against ARGS in shape mode",
	}
	failOther = failure.Entry{
		Literal: "ERR:http:<message>", Fault: failure.FaultRow,
		Cause: "the call could not be built for a reason of no other kind",
		Fix:   "the message names what to repair in the row",
	}
)

// Failures is the http runner's failure table.
var Failures = failure.Table{
	failBadTarget, failAuth, runner.SubstitutionTooLargeEntry, failOriginChanged, failOriginBusy,
	failRedirectOffOrigin, failTimeout, failFetch, failResponseTooLarge, runner.CanceledEntry(runner.RunnerHTTP),
	failUnauthorized, failStatus, failOther,
}

// Failures implements runner.Documented.
func (r *Runner) Failures() failure.Table { return Failures }

func errBadTarget(msg string) *failure.Error { return failBadTarget.New(msg) }

// errAuth wraps an auth failure (ERR:auth:…) as ERR:http:<KEY>:ERR:auth:….
func errAuth(key string, err error) *failure.Error {
	return failAuth.Wrap(err, key, strings.TrimPrefix(err.Error(), "ERR:auth:"))
}

func errStatus(status int, body string) *failure.Error {
	if status == http.StatusUnauthorized {
		return failUnauthorized.New(body)
	}
	return failStatus.New(strconv.Itoa(status), body)
}

func errFetch(msg string) *failure.Error { return failFetch.New(msg) }

func errTimeout(d time.Duration) *failure.Error { return failTimeout.New(d.String()) }

// errResponseTooLarge matches runner.ErrResultTooLarge too: it is the http runner's
// result cap, under the name its literal has always had.
func errResponseTooLarge(limit int64) *failure.Error {
	return failResponseTooLarge.New(strconv.FormatInt(limit, 10))
}

// errRedirectOffOrigin is ERR:http:redirect_off_origin:<location>, the location
// without its user info, query and fragment.
func errRedirectOffOrigin(location string) *failure.Error {
	return failRedirectOffOrigin.New(location)
}

// errOther is ERR:http:<message> for a build failure of no known kind.
func errOther(err error) *failure.Error {
	return failOther.Wrap(err, err.Error())
}

// errOriginBusy is ERR:http:origin_busy:<origin>:<max>.
func errOriginBusy(origin string, limit int) *failure.Error {
	return failOriginBusy.New(origin, strconv.Itoa(limit))
}

// errOriginChanged is ERR:http:origin_changed:<want>!=<got>: the literal origin of
// the row's target, and the origin the call's URL has.
func errOriginChanged(want, got string) *failure.Error { return failOriginChanged.New(want, got) }
