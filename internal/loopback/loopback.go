// Package loopback tells whether an address, or the Host a request names,
// belongs to this machine alone: localhost or a loopback address. The listener
// checks (the console served by default on a loopback address, a node's and the
// MCP handler's DNS-rebinding guards) and the importers' plain-http rule ask it.
package loopback

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Host reports whether hostport (a host or host:port; an IPv6 address with or
// without brackets) is localhost or a loopback address. "localhost" is matched
// as written, as the MCP SDK's own check matches it; a caller that takes a Host
// in any case lower-cases it first.
func Host(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// Reached reports whether r came in on a loopback address (the server's
// http.LocalAddrContextKey), without making the address's string for a TCP
// one, as every request asks.
func Reached(r *http.Request) bool {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || a == nil {
		return false
	}
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.IsLoopback()
	}
	return Host(a.String())
}
