package capdir

import (
	"sort"

	"github.com/capdir/capdir/dispatcher/runner/mcprunner"
	"github.com/capdir/capdir/projector"
)

// nodeUpstreams are the upstream MCP servers rows of runner mcp call on this
// node: the operator's (--mcp-http, --mcp-stdio) first, then those the owner
// registered (PUT /api/upstreams/{name}, folded by the projector). A
// registration is checked again here as the door checks it (mcprunner.NewHTTP),
// so an event the door would refuse is never called; a registered upstream is
// never a command.
type nodeUpstreams struct {
	fixed mcprunner.Static
	p     *projector.Projector
}

// Upstream implements mcprunner.Upstreams; it reads memory only.
func (u nodeUpstreams) Upstream(name string) (mcprunner.Upstream, bool) {
	if up, ok := u.fixed[name]; ok {
		return up, true
	}
	reg, ok := u.p.Upstream(name)
	if !ok {
		return mcprunner.Upstream{}, false
	}
	up, err := mcprunner.NewHTTP(reg.Name, reg.URL, reg.Auth)
	return up, err == nil
}

// Names are every upstream's name, sorted.
func (u nodeUpstreams) Names() []string {
	names := u.fixed.Names()
	for _, reg := range u.p.Upstreams() {
		if _, ok := u.fixed[reg.Name]; !ok {
			names = append(names, reg.Name)
		}
	}
	sort.Strings(names)
	return names
}
