package runner

import (
	"net"
	"net/url"
	"strings"
)

// Origin is scheme://host:port of u, lower case, with the scheme's default port
// made explicit: what a credential is bound to. A runner sends a credential only
// to its target's origin.
func Origin(u *url.URL) string {
	scheme, port := strings.ToLower(u.Scheme), u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}
