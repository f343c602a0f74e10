package httprunner

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/capdir/capdir/dispatcher/runner"
)

// maxRedirects is net/http's own limit, kept when the client has no policy of its own.
const maxRedirects = 10

// redirectPolicy is the CheckRedirect of one call. A call that carries a credential
// follows a redirect only to its own origin (scheme, host and port, as the row's
// target gives them) and never sends a Referer there, since the previous URL may
// hold a query credential; a redirect elsewhere is not followed and fails the call
// with ERR:http:redirect_off_origin:<location>. A call without a credential follows
// redirects as net/http does. next, the configured client's own CheckRedirect, is
// applied after this check (net/http's limit of ten redirects when nil).
func redirectPolicy(credentialed bool, rd runner.Redactor, next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if credentialed {
			if origin(req.URL) != origin(via[0].URL) {
				return errRedirectOffOrigin(rd.Scrub(withoutQuery(req.URL)))
			}
			req.Header.Del("Referer")
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

// origin is runner.Origin.
func origin(u *url.URL) string { return runner.Origin(u) }

// withoutQuery is u without user info, query and fragment.
func withoutQuery(u *url.URL) string {
	v := *u
	v.User, v.RawQuery, v.ForceQuery, v.Fragment, v.RawFragment = nil, "", false, "", ""
	return v.String()
}
