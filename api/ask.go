package api

import (
	"fmt"
	"net/http"

	"github.com/capdir/capdir/contract"

	"github.com/capdir/capdir/projector"
	"github.com/capdir/capdir/projector/ask"
)

// Ask: GET /api/dispatch?ask=<plain words>[&limit=N] ranks the rows the caller may
// see for a need said in plain words (package projector/ask):
//
//	{"ask":"…","results":[{"key":…,"type":…,"category":…,"what":…,"score":…,
//	  "why":["what: temperature, coordinate",…]},…],"total":N}
//
// limit defaults to 10 and is lowered to 50. The owner (x-terminal-key) sees every
// enabled row, a capability token (Authorization: Bearer) the rows in its scope;
// without a credential that holds the answer is dispatch's 401. A bad ask (empty,
// over 512 bytes, only common words, over 20 words), a bad limit, or ?ask= with
// ?key= or &body= is 400 with what to fix.

// NewAskIndex builds the ask index over p's rows and keeps it current with every
// directory commit. A node builds one and gives it to the facade (Config.Ask) and
// to the MCP server's search mode.
func NewAskIndex(p *projector.Projector) (*ask.Index, error) {
	x := ask.New()
	if err := p.WatchRows(x.Apply); err != nil {
		return nil, err
	}
	return x, nil
}

// askGet answers ?ask= for the owner (every enabled row) or a token holder (the
// rows in its scope, by key or category, as its documents and registry).
func (s *Server) askGet(w http.ResponseWriter, r *http.Request) error {
	v, err := s.viewer(r)
	if err != nil {
		return err
	}
	if v.Role == contract.RoleOwner {
		return s.askAnswer(w, r, nil)
	}
	return s.askAnswer(w, r, func(key, category string) bool {
		return v.InScope(&contract.Row{Key: key, Category: category})
	})
}

// askAnswer answers ?ask= over the rows visible admits, by key and category (nil:
// every enabled row). A caller holding a capability token passes its scope.
func (s *Server) askAnswer(w http.ResponseWriter, r *http.Request, visible func(key, category string) bool) error {
	q, err := askQuery(r)
	if err != nil {
		return err
	}
	q.Visible = visible
	a, err := s.ask.Search(q)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadQuery, err)
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// askQuery reads ?ask= and &limit=. Errors match ErrBadQuery.
func askQuery(r *http.Request) (ask.Query, error) {
	q := r.URL.Query()
	if q.Has("key") || q.Has("body") {
		return ask.Query{}, fmt.Errorf("%w: ?ask= finds rows and ?key=KEY&body=ARGS runs one: send one or the other", ErrBadQuery)
	}
	if len(q["ask"]) > 1 {
		return ask.Query{}, fmt.Errorf("%w: ask is given %d times: send it once", ErrBadQuery, len(q["ask"]))
	}
	limit, err := queryInt(q.Get("limit"), "limit", ask.DefaultLimit, 1)
	if err != nil {
		return ask.Query{}, err
	}
	return ask.Query{Text: q.Get("ask"), Limit: min(limit, ask.MaxLimit)}, nil
}
