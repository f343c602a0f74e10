package mcprunner

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/capdir/capdir/dispatcher/runner"
)

// Upstream is where one upstream MCP server lives. Exactly one of URL and Command
// is set.
type Upstream struct {
	// Name is the upstream's name, the first part of a row's target.
	Name string
	// URL is the upstream's streamable HTTP endpoint.
	URL string
	// Auth is the credential the runner applies to every request to URL, in the
	// form of a row's auth column (headers:{"Authorization":"Bearer $TOKEN"},
	// bearer:ENV, ...): environment variable names, never values.
	Auth string
	// Command is a stdio upstream's program and arguments. It comes only from the
	// operator's flags or configuration, never from a row or the API: a command is
	// code execution on the node.
	Command []string
}

// fingerprint changes when anything that decides the connection changes, so a
// session made for an older registration is not reused.
func (u Upstream) fingerprint() string {
	return u.URL + "\x00" + u.Auth + "\x00" + strings.Join(u.Command, "\x00")
}

// Upstreams finds an upstream by name. Implementations are safe for concurrent
// use; Upstream must not block.
type Upstreams interface {
	Upstream(name string) (Upstream, bool)
}

// Static is a fixed set of upstreams, by name.
type Static map[string]Upstream

// Upstream implements Upstreams.
func (s Static) Upstream(name string) (Upstream, bool) {
	u, ok := s[name]
	return u, ok
}

// SplitTarget splits a row's target "<upstream>/<tool>" at its first '/'; ok is
// false when either part is empty or holds a space.
func SplitTarget(target string) (upstream, tool string, ok bool) {
	upstream, tool, found := strings.Cut(strings.TrimSpace(target), "/")
	if !found || upstream == "" || tool == "" || strings.ContainsAny(target, " \t\r\n") {
		return "", "", false
	}
	return upstream, tool, true
}

// ParseHTTP reads an operator's streamable HTTP upstream, "NAME=URL" or
// "NAME=URL AUTH" with AUTH in the form of a row's auth column
// (headers:{"Authorization":"Bearer $TOKEN"}, bearer:ENV, ...).
func ParseHTTP(spec string) (Upstream, error) {
	name, rest, err := splitSpec(spec)
	if err != nil {
		return Upstream{}, err
	}
	raw, auth, _ := strings.Cut(rest, " ")
	u, err := NewHTTP(name, raw, auth)
	if err != nil {
		return Upstream{}, fmt.Errorf("%w: %q: %s", ErrBadUpstream, spec, problem(err))
	}
	return u, nil
}

// NewHTTP checks a streamable HTTP upstream, from the operator's flags or the
// owner's registration alike: name of letters, digits, '-' and '_'; rawURL
// http:// or https:// with a host and without user info, query or fragment (a
// credential goes in auth, never in the URL); auth in the form of a row's auth
// column. Its errors match ErrBadUpstream.
func NewHTTP(name, rawURL, auth string) (Upstream, error) {
	auth = strings.TrimSpace(auth)
	if !validName(name) {
		return Upstream{}, fmt.Errorf("%w: the name %q must be 1 to 64 letters, digits, '-' and '_'", ErrBadUpstream, clipName(name))
	}
	u, err := url.Parse(rawURL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return Upstream{}, fmt.Errorf("%w: the URL must be http:// or https:// with a host", ErrBadUpstream)
	case u.User != nil:
		return Upstream{}, fmt.Errorf("%w: the URL holds user info: name the credential in auth (bearer:ENV, basic:USER_ENV:PASS_ENV, headers:{...}) instead", ErrBadUpstream)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return Upstream{}, fmt.Errorf("%w: the URL holds a query or a fragment: give the endpoint alone, and a credential in auth", ErrBadUpstream)
	}
	if _, err := runner.AuthVariables(auth); err != nil {
		return Upstream{}, fmt.Errorf("%w: auth: %w", ErrBadUpstream, err)
	}
	return Upstream{Name: name, URL: rawURL, Auth: auth}, nil
}

// problem is err's text after ErrBadUpstream's prefix.
func problem(err error) string {
	return strings.TrimPrefix(err.Error(), ErrBadUpstream.Error()+": ")
}

// clipName bounds a name quoted in an error.
func clipName(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// ParseStdio reads an operator's stdio upstream, "NAME=COMMAND ARGS…" (split at
// white space; no quoting).
func ParseStdio(spec string) (Upstream, error) {
	name, rest, err := splitSpec(spec)
	if err != nil {
		return Upstream{}, err
	}
	return Upstream{Name: name, Command: strings.Fields(rest)}, nil
}

// splitSpec splits "NAME=REST": NAME of letters, digits, '-' and '_', REST not
// empty.
func splitSpec(spec string) (name, rest string, err error) {
	name, rest, _ = strings.Cut(strings.TrimSpace(spec), "=")
	rest = strings.TrimSpace(rest)
	if !validName(name) || rest == "" {
		return "", "", fmt.Errorf("%w: %q: want NAME=..., NAME of letters, digits, '-' and '_'", ErrBadUpstream, spec)
	}
	return name, rest, nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// ParseUpstreams reads the operator's --mcp-http and --mcp-stdio values into one
// set; a name given twice is refused.
func ParseUpstreams(httpSpecs, stdioSpecs []string) (Static, error) {
	out := Static{}
	var errs []error
	add := func(u Upstream, err error) {
		switch {
		case err != nil:
			errs = append(errs, err)
		case out[u.Name].Name != "":
			errs = append(errs, fmt.Errorf("%w: %s is given twice", ErrBadUpstream, u.Name))
		default:
			out[u.Name] = u
		}
	}
	for _, s := range httpSpecs {
		add(ParseHTTP(s))
	}
	for _, s := range stdioSpecs {
		add(ParseStdio(s))
	}
	return out, errors.Join(errs...)
}

// Names are the upstreams' names, sorted.
func (s Static) Names() []string {
	names := make([]string, 0, len(s))
	for name := range s {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
