package mcprunner

import "strings"

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
