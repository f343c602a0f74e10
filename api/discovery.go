package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/projector"
)

// Discovery is the read side of GET /api/dispatch: a row's contract document
// (?key=KEY&format=markdown|json) and the registry of rows (?registry=1).

// isDiscovery reports whether a GET /api/dispatch asks for a document or the
// registry rather than a call.
func isDiscovery(q url.Values) bool { return q.Has("format") || q.Has("registry") }

// discoveryGet serves the discovery forms of GET /api/dispatch. The credential
// decides the viewer, and the viewer what it sees: today only the owner key is
// accepted (anything else is 401, before any row is read); a capability token will
// become a contract.Viewer with its scope and risk ceiling here.
func (s *Server) discoveryGet(w http.ResponseWriter, r *http.Request) {
	s.owner(func(w http.ResponseWriter, r *http.Request) {
		s.discover(w, r, contract.Owner())
	})(w, r)
}

func (s *Server) discover(w http.ResponseWriter, r *http.Request, v contract.Viewer) {
	q := r.URL.Query()
	if err := discoveryQueryError(q); err != nil {
		writeDirError(w, "", err)
		return
	}
	if q.Has("registry") {
		s.registry(w, q.Get("category"), v)
		return
	}
	s.document(w, q.Get("key"), q.Get("format"), v)
}

// document answers a row's contract document in format. A row the viewer may not
// discover (disabled, or outside its scope) is answered as a key with no row.
func (s *Server) document(w http.ResponseWriter, key, format string, v contract.Viewer) {
	row, _, err := s.cfg.Projector.Row(key)
	switch {
	case errors.Is(err, projector.ErrNotFound) || err == nil && !v.Discovers(&row):
		writeJSON(w, http.StatusNotFound, documentNotFound(key))
		return
	case err != nil:
		writeDirError(w, key, fmt.Errorf("%w: %v", errDirUnavailable, err))
		return
	}
	doc := contract.NewDocument(&row, contract.DocContext{
		BaseURL: s.cfg.PublicURL, Viewer: v, Auth: authInfo(row.Auth),
		BreakerOpen: breaker.Message(row.Key, s.cfg.Breaker.Threshold),
	})
	w.Header().Set("Cache-Control", "no-store") // the affordances are the reader's own
	if format == formatMarkdown {
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		w.Write(doc.Markdown())
		return
	}
	body, err := doc.JSON()
	if err != nil {
		writeDirError(w, key, fmt.Errorf("%w: %v", errDirUnavailable, err))
		return
	}
	writeJSON(w, http.StatusOK, body[:len(body)-1]) // writeJSON adds the newline
}

// authInfo is what a row's auth column reads (runner.DescribeAuth).
func authInfo(spec string) contract.AuthInfo { return runner.DescribeAuth(spec) }

// registryAnswer is the answer to GET /api/dispatch?registry=1.
type registryAnswer struct {
	Count    int                      `json:"count"`
	Category string                   `json:"category,omitempty"`
	Order    string                   `json:"order"`
	Document string                   `json:"document"`
	Rows     []contract.RegistryEntry `json:"rows"`
}

// registry lists every enabled row the viewer may discover, in planner order,
// optionally of one category.
func (s *Server) registry(w http.ResponseWriter, category string, v contract.Viewer) {
	enabled := 1
	entries := []contract.RegistryEntry{}
	err := s.cfg.Projector.Each(projector.Filter{Category: category, Enabled: &enabled}, func(r *contract.Row) error {
		if v.Discovers(r) {
			entries = append(entries, contract.NewRegistryEntry(r))
		}
		return nil
	})
	if err != nil {
		writeDirError(w, "", fmt.Errorf("%w: %v", errDirUnavailable, err))
		return
	}
	contract.SortRegistry(entries)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, registryAnswer{
		Count: len(entries), Category: category, Order: "planner_rank ascending, then the canonical order",
		Document: "GET " + strings.TrimRight(s.cfg.PublicURL, "/") + "/api/dispatch?key={key}&format=markdown",
		Rows:     entries,
	})
}
