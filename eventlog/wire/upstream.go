package wire

// Upstream MCP servers registered by the owner. The owner registers a streamable
// HTTP upstream by name with an UPSTREAM_REGISTERED event and removes it with an
// UPSTREAM_REMOVED event, both on UpstreamSubject(name) of the control stream,
// which only capdir's own connection may write. A registration holds a URL and a
// credential in the form of a row's auth column (environment variable names,
// never values). It can hold no command: a stdio upstream is code run on the node,
// so it comes only from the operator's flags or configuration.
const (
	TypeUpstreamRegistered = "UPSTREAM_REGISTERED"
	TypeUpstreamRemoved    = "UPSTREAM_REMOVED"
)

// upstreamPrefix starts the control-stream subjects of upstream registrations.
const upstreamPrefix = controlPrefix + "upstream."

// UpstreamSubject is where the registrations of the upstream name are appended:
// capdir.ctl.upstream.<NAME>. ValidUpstreamName holds for name.
func UpstreamSubject(name string) string { return upstreamPrefix + name }

// UpstreamSubjects matches every upstream registration.
const UpstreamSubjects = upstreamPrefix + ">"

// MaxUpstreamNameLen is the longest name an upstream may have.
const MaxUpstreamNameLen = 64

// ValidUpstreamName reports whether name can name an upstream: 1 to
// MaxUpstreamNameLen characters of A-Z a-z 0-9 _ -, one safe subject token.
func ValidUpstreamName(name string) bool { return len(name) <= MaxUpstreamNameLen && ValidKey(name) }

// UpstreamRegistered is the data of an UPSTREAM_REGISTERED event: the upstream
// named Name is at URL (streamable HTTP), called with the credential Auth. A
// later registration of the same name replaces it.
type UpstreamRegistered struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	// Auth is in the form of a row's auth column (bearer:ENV,
	// headers:{"Authorization":"Bearer $ENV"}, ...): variable names, never values.
	Auth string `json:"auth,omitempty"`
}

// UpstreamRemoved is the data of an UPSTREAM_REMOVED event: the upstream named
// Name is no longer registered; the rows of its tools stay, and their calls fail.
type UpstreamRemoved struct {
	Name string `json:"name"`
}
