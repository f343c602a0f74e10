package api

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/command"
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
// decides the viewer, and the viewer what it sees: the owner key every enabled
// row; a capability token that holds the rows in its scope, with the affordances
// its risk ceiling allows (a row outside the scope is answered as no row). No
// credential, or one that does not hold, is 401 before any row is read.
func (s *Server) discoveryGet(w http.ResponseWriter, r *http.Request) error {
	v, err := s.viewer(r)
	if err != nil {
		return err
	}
	return s.discover(w, r, v)
}

func (s *Server) discover(w http.ResponseWriter, r *http.Request, v contract.Viewer) error {
	q := r.URL.Query()
	if err := discoveryQueryError(q); err != nil {
		return err
	}
	if q.Has("registry") {
		return s.registry(w, q.Get("category"), v)
	}
	if q.Has("at") {
		return s.documentAt(w, r, v)
	}
	return s.document(w, r, q.Get("key"), q.Get("format"), v)
}

// document answers a row's contract document in format. A row the viewer may not
// discover (disabled, or outside its scope) is answered as a key with no row; a
// key this node's projection misses is looked up in the log first (Directory.Row).
func (s *Server) document(w http.ResponseWriter, r *http.Request, key, format string, v contract.Viewer) error {
	row, _, err := s.dir.Row(r.Context(), key)
	switch {
	case errors.Is(err, command.ErrNotFound) || err == nil && !v.Discovers(&row):
		return &documentNotFound{key: key}
	case err != nil:
		return err
	}
	return s.writeDocument(w, &row, format, v)
}

// writeDocument writes row's contract document in format, as v reads it.
func (s *Server) writeDocument(w http.ResponseWriter, row *contract.Row, format string, v contract.Viewer) error {
	key := row.Key
	doc := s.Document(row, v)
	w.Header().Set("Cache-Control", "no-store") // the affordances are the reader's own
	if format == formatMarkdown {
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		w.Write(doc.Markdown())
		return nil
	}
	body, err := doc.JSON()
	if err != nil {
		return command.WithKey(key, command.Unavailable(err))
	}
	writeJSON(w, http.StatusOK, body[:len(body)-1]) // writeJSON adds the newline
	return nil
}

// Document is row's contract document as v reads it: GET /api/dispatch?format=
// and the console both build it here.
func (s *Server) Document(row *contract.Row, v contract.Viewer) contract.Document {
	return contract.NewDocument(row, contract.DocContext{
		BaseURL: s.cfg.PublicURL, Viewer: v, Auth: authInfo(row.Auth),
		BreakerOpen: breaker.Message(row.Key, s.cfg.Breaker.Threshold),
		Failures:    runner.TableOf(s.cfg.Dispatcher, row),
	})
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
// optionally of one category, which the answer echoes clipped (clipParam): the
// rows carry their own category whole.
func (s *Server) registry(w http.ResponseWriter, category string, v contract.Viewer) error {
	enabled := 1
	entries := []contract.RegistryEntry{}
	err := s.cfg.Projector.Each(projector.Filter{Category: category, Enabled: &enabled}, func(r *contract.Row) error {
		if v.Discovers(r) {
			entries = append(entries, contract.NewRegistryEntry(r))
		}
		return nil
	})
	if err != nil {
		return command.Unavailable(err)
	}
	contract.SortRegistry(entries)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, registryAnswer{
		Count: len(entries), Category: clipParam(category), Order: "planner_rank ascending, then the canonical order",
		Document: "GET " + strings.TrimRight(s.cfg.PublicURL, "/") + "/api/dispatch?key={key}&format=markdown",
		Rows:     entries,
	})
	return nil
}
