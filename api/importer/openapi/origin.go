package openapi

import (
	"net/url"
	"sort"
	"strings"

	"github.com/capdir/capdir/api/importer"
	"github.com/capdir/capdir/internal/loopback"
)

// Credential is where one imported row sends its credential.
type Credential struct {
	// Origin is the row's server's scheme, host and port (the port left out when
	// it is the scheme's default), as Origin gives it.
	Origin string
	// Env is the environment variable the row's credential names.
	Env string
}

// site is an origin: scheme, host (lower case, IPv6 without brackets) and port
// ("" for the scheme's default).
type site struct{ scheme, host, port string }

var defaultPort = map[string]string{"http": "80", "https": "443"}

// parseSite is the origin of the absolute URL raw.
func parseSite(raw string) (site, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return site{}, false
	}
	s := site{scheme: strings.ToLower(u.Scheme), host: strings.ToLower(u.Hostname()), port: u.Port()}
	if s.port == defaultPort[s.scheme] {
		s.port = ""
	}
	return s, true
}

func (s site) String() string {
	h := s.host
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	if s.port != "" {
		h += ":" + s.port
	}
	return s.scheme + "://" + h
}

// loopback reports whether s's host is this machine's (localhost, 127.0.0.0/8,
// ::1): plain http to it crosses no network.
func (s site) loopback() bool { return loopback.Host(s.host) }

// Origin is the origin of the absolute http(s) URL raw: its scheme, host and port,
// the port left out when it is the scheme's default ("https://API.example:443/v1"
// is "https://api.example"). A URL without a host gives "".
func Origin(raw string) string {
	s, ok := parseSite(raw)
	if !ok {
		return ""
	}
	return s.String()
}

// validOrigin checks an Options.AuthOrigins entry: scheme://host[:port] of http
// or https, without user info, path, query or fragment.
func validOrigin(raw string) string {
	if _, why := absoluteServer(raw); why != "" {
		return why
	}
	u, _ := url.Parse(raw)
	switch {
	case u.User != nil:
		return "it has user info"
	case strings.Trim(u.Path, "/") != "":
		return "it has a path"
	}
	return ""
}

// originOps is an origin and the operations whose rows would send it the credential.
type originOps struct {
	origin string
	ops    []string
}

// checkCredentialOrigins refuses the import when a row with a credential would
// send it anywhere but the main server's origin (server: Options.Server, else the
// spec's first server) or an origin the operator named in Options.AuthOrigins, or
// over plain http to a host that is not loopback unless the operator named that
// origin. sources names each credentialed row's operation, by key.
func checkCredentialOrigins(server string, opt Options, creds map[string]Credential, sources map[string]string) error {
	if len(creds) == 0 {
		return nil
	}
	main, _ := parseSite(server)
	trusted := map[string]bool{}
	for _, o := range opt.AuthOrigins {
		if s, ok := parseSite(o); ok {
			trusted[s.String()] = true
		}
	}
	off, plain := map[string][]string{}, map[string][]string{}
	for key, cr := range creds {
		s, _ := parseSite(cr.Origin)
		switch {
		case trusted[cr.Origin]:
		case cr.Origin != main.String():
			off[cr.Origin] = append(off[cr.Origin], sources[key])
		case s.scheme == "http" && !s.loopback():
			plain[cr.Origin] = append(plain[cr.Origin], sources[key])
		}
	}
	if len(off) == 0 && len(plain) == 0 {
		return nil
	}
	return refuseCredentialOrigin(server, main.String(), grouped(off), grouped(plain))
}

// grouped is m by origin, the origins and each one's operations sorted.
func grouped(m map[string][]string) []originOps {
	out := make([]originOps, 0, len(m))
	for origin, ops := range m {
		sort.Strings(ops)
		out = append(out, originOps{origin: origin, ops: ops})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].origin < out[j].origin })
	return out
}

// CredentialOrigins is the origins the rows of keys send their credential to,
// sorted, each with the variables it receives, sorted, and its count of rows.
func (s Spec) CredentialOrigins(keys []string) []importer.CredentialOrigin {
	byOrigin := map[string]*importer.CredentialOrigin{}
	for _, k := range keys {
		cr, ok := s.Credentials[k]
		if !ok {
			continue
		}
		o := byOrigin[cr.Origin]
		if o == nil {
			o = &importer.CredentialOrigin{Origin: cr.Origin}
			byOrigin[cr.Origin] = o
		}
		o.Rows++
		if i := sort.SearchStrings(o.Env, cr.Env); i == len(o.Env) || o.Env[i] != cr.Env {
			o.Env = append(o.Env[:i], append([]string{cr.Env}, o.Env[i:]...)...)
		}
	}
	out := make([]importer.CredentialOrigin, 0, len(byOrigin))
	for _, o := range byOrigin {
		out = append(out, *o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Origin < out[j].Origin })
	return out
}
