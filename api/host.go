package api

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/capdir/capdir/internal/loopback"
)

// guardHost answers 403 host_not_allowed, before any route, key check or
// throttle, to a request that reached a loopback address under a Host that is
// not loopback (localhost, 127.0.0.0/8, ::1, or the unspecified address) nor
// publicHost: a web page whose name was made to resolve to 127.0.0.1 (DNS
// rebinding) is same-origin to the browser, and could otherwise read /metrics
// and /healthz, send wrong keys until the owner's key is throttled, and reach
// every route a local client can. A request to any other address is passed on:
// a node listening on a network address is reached by the names its operator
// gives it.
func guardHost(h http.Handler, publicHost string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if loopback.Reached(r) && !isLoopback(r.Host) && !sameHost(r.Host, publicHost) {
			writeErr(w, &hostError{host: r.Host})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// publicURLHost is the host name of a public URL ("" when it has none).
func publicURLHost(public string) string {
	u, err := url.Parse(public)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// hostName is hostport's host, without the port or an IPv6 address's brackets.
func hostName(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// isLoopback reports whether hostport, a Host in any case, names localhost or a
// loopback address, or is the unspecified address (0.0.0.0, [::]), which a
// client on this machine dials to reach it: an address a page's name cannot be
// rebound to.
func isLoopback(hostport string) bool {
	hostport = strings.ToLower(hostport)
	if loopback.Host(hostport) {
		return true
	}
	ip, err := netip.ParseAddr(hostName(hostport))
	return err == nil && ip.IsUnspecified()
}

// sameHost reports whether hostport's host is host (a DNS name's case aside).
func sameHost(hostport, host string) bool {
	return host != "" && strings.EqualFold(hostName(hostport), host)
}

// hostError is ErrHostNotAllowed for the Host a request named.
type hostError struct{ host string }

func (e *hostError) Error() string { return ErrHostNotAllowed.Error() + ": " + e.host }
func (e *hostError) Unwrap() error { return ErrHostNotAllowed }

// hostBody is {"error":"host_not_allowed","host":…,"how_to_fix":…}, the host
// clipped (clipEcho).
func hostBody(err error) any {
	var he *hostError
	errors.As(err, &he)
	return map[string]string{"error": ErrHostNotAllowed.Error(), "host": clipEcho(he.host),
		"how_to_fix": "this node listens on a loopback address and answers requests for localhost, 127.0.0.1 or [::1], " +
			"or for --public-url's host: reach it as http://localhost:<port>, or set --public-url to the name a proxy on this machine forwards"}
}
