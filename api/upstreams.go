package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/capdir/capdir/dispatcher/runner/mcprunner"
	"github.com/capdir/capdir/eventlog/wire"
)

// registerUpstreams adds the owner's routes of upstream MCP servers:
//
//	GET    /api/upstreams         every upstream this node calls: the operator's
//	                              (--mcp-http, --mcp-stdio) and the registered ones
//	GET    /api/upstreams/{name}  one of them
//	PUT    /api/upstreams/{name}  register (or replace) a streamable HTTP upstream:
//	                              {"url":…, "auth":…}; appends UPSTREAM_REGISTERED
//	DELETE /api/upstreams/{name}  remove a registered upstream: UPSTREAM_REMOVED
//
// A registration is an event of the control stream, so every node folds it and a
// replay gives it back. It holds a URL and a credential in the form of a row's
// auth column (environment variable names, never values, on the operator's
// allow-list), never a command: a stdio upstream is code run on the node, so only
// the operator's flags name one.
func (s *Server) registerUpstreams() {
	s.handle("GET /api/upstreams", s.owner(s.listUpstreams))
	s.handle("GET /api/upstreams/{name}", s.owner(s.getUpstream))
	s.handle("PUT /api/upstreams/{name}", s.owner(s.putUpstream))
	s.handle("DELETE /api/upstreams/{name}", s.owner(s.deleteUpstream))
}

// UpstreamInfo is one upstream as the upstream routes answer it.
type UpstreamInfo struct {
	Name string `json:"name"`
	// Transport is "http" (streamable HTTP) or "stdio".
	Transport string `json:"transport"`
	// URL and Auth are a streamable HTTP upstream's; a stdio upstream's command
	// is not shown.
	URL  string `json:"url,omitempty"`
	Auth string `json:"auth,omitempty"`
	// From is "flags" for the operator's upstreams, "registered" for the owner's.
	From string `json:"from"`
	// Seq is a registration's control-stream sequence.
	Seq uint64 `json:"seq,omitempty"`
}

// UpstreamRegistration is PUT /api/upstreams/{name}'s body.
type UpstreamRegistration struct {
	URL  string `json:"url"`
	Auth string `json:"auth,omitempty"`
}

// UpstreamAnswer is PUT /api/upstreams/{name}'s answer: Changed is false when
// the same registration was there already (nothing was appended).
type UpstreamAnswer struct {
	OK       bool         `json:"ok"`
	Upstream UpstreamInfo `json:"upstream"`
	Changed  bool         `json:"changed"`
}

// maxUpstreamBody bounds a registration: a URL and an auth spec.
const maxUpstreamBody = 16 << 10

// Upstreams are every upstream this node calls, the operator's first, each
// group sorted by name.
func (s *Server) Upstreams() []UpstreamInfo {
	fixed := s.cfg.FixedUpstreams
	out := make([]UpstreamInfo, 0, len(fixed))
	for _, name := range fixed.Names() {
		out = append(out, fixedInfo(fixed[name]))
	}
	for _, u := range s.cfg.Projector.Upstreams() {
		if _, ok := fixed[u.Name]; !ok {
			out = append(out, UpstreamInfo{Name: u.Name, Transport: "http", URL: u.URL, Auth: u.Auth, From: "registered", Seq: u.Seq})
		}
	}
	return out
}

func fixedInfo(u mcprunner.Upstream) UpstreamInfo {
	if len(u.Command) > 0 {
		return UpstreamInfo{Name: u.Name, Transport: "stdio", From: "flags"}
	}
	return UpstreamInfo{Name: u.Name, Transport: "http", URL: u.URL, Auth: u.Auth, From: "flags"}
}

func (s *Server) listUpstreams(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, map[string][]UpstreamInfo{"upstreams": s.Upstreams()})
	return nil
}

func (s *Server) getUpstream(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	for _, u := range s.Upstreams() {
		if u.Name == name {
			writeJSON(w, http.StatusOK, u)
			return nil
		}
	}
	return errUpstreamNotRegistered(name)
}

func (s *Server) putUpstream(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	in, err := decodeRegistration(http.MaxBytesReader(w, r.Body, maxUpstreamBody))
	if err != nil {
		return err
	}
	info, changed, err := s.RegisterUpstream(r.Context(), name, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, UpstreamAnswer{OK: true, Upstream: info, Changed: changed})
	return nil
}

// decodeRegistration reads one JSON object of url and auth; any other field is
// refused by name, "command" with why.
func decodeRegistration(body io.Reader) (UpstreamRegistration, error) {
	var raw map[string]json.RawMessage
	err := decodeOne(body, &raw)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return UpstreamRegistration{}, errUpstreamTooLarge()
	case errors.Is(err, io.EOF):
		return UpstreamRegistration{}, errUpstreamBody("empty body")
	case errors.Is(err, errTrailingData):
		return UpstreamRegistration{}, errUpstreamBody(err.Error())
	case err != nil || raw == nil:
		return UpstreamRegistration{}, errUpstreamBody("the body must be one JSON object")
	}
	var in UpstreamRegistration
	for field, v := range raw {
		var dst *string
		switch field {
		case "url":
			dst = &in.URL
		case "auth":
			dst = &in.Auth
		case "command", "args", "cmd":
			return in, errUpstreamCommand
		default:
			return in, errUpstreamBody("unknown field " + strings.ToValidUTF8(clipParam(field), "?"))
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return in, errUpstreamBody(`"` + field + `" must be a string`)
		}
	}
	return in, nil
}

// RegisterUpstream registers (or replaces) the streamable HTTP upstream name
// through the command side (command.Upstreams.Register) and answers it as the
// routes do; changed is false when the same registration was there.
func (s *Server) RegisterUpstream(ctx context.Context, name string, in UpstreamRegistration) (UpstreamInfo, bool, error) {
	in.Auth = strings.TrimSpace(in.Auth)
	seq, changed, err := s.cmd.Upstreams().Register(ctx, wire.UpstreamRegistered{Name: name, URL: in.URL, Auth: in.Auth})
	if err != nil {
		return UpstreamInfo{}, false, err
	}
	return UpstreamInfo{Name: name, Transport: "http", URL: in.URL, Auth: in.Auth, From: "registered", Seq: seq}, changed, nil
}

func (s *Server) deleteUpstream(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if err := s.RemoveUpstream(r.Context(), name); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "name": name, "removed": true})
	return nil
}

// RemoveUpstream removes the registered upstream name (command.Upstreams.Remove).
func (s *Server) RemoveUpstream(ctx context.Context, name string) error {
	return s.cmd.Upstreams().Remove(ctx, name)
}
