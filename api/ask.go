package api

import (
	"fmt"
	"net/http"

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
// enabled row; without the key the answer is the owner routes' 401. A bad ask (empty,
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

// askGet answers ?ask= for the owner: every enabled row.
func (s *Server) askGet(w http.ResponseWriter, r *http.Request) {
	s.owner(func(w http.ResponseWriter, r *http.Request) { s.askAnswer(w, r, nil) })(w, r)
}

// askAnswer answers ?ask= over the rows visible admits, by key and category (nil:
// every enabled row). A caller holding a capability token passes its scope.
func (s *Server) askAnswer(w http.ResponseWriter, r *http.Request, visible func(key, category string) bool) {
	q, err := askQuery(r)
	if err == nil {
		q.Visible = visible
		var a ask.Answer
		if a, err = s.ask.Search(q); err == nil {
			writeJSON(w, http.StatusOK, a)
			return
		}
		err = fmt.Errorf("%w: %w", errDirBadQuery, err)
	}
	writeError(w, dirStatus(err), err.Error())
}

// askQuery reads ?ask= and &limit=. Errors match errDirBadQuery.
func askQuery(r *http.Request) (ask.Query, error) {
	q := r.URL.Query()
	if q.Has("key") || q.Has("body") {
		return ask.Query{}, fmt.Errorf("%w: ?ask= finds rows and ?key=KEY&body=ARGS runs one: send one or the other", errDirBadQuery)
	}
	if len(q["ask"]) > 1 {
		return ask.Query{}, fmt.Errorf("%w: ask is given %d times: send it once", errDirBadQuery, len(q["ask"]))
	}
	limit, err := queryInt(q.Get("limit"), "limit", ask.DefaultLimit, 1)
	if err != nil {
		return ask.Query{}, err
	}
	return ask.Query{Text: q.Get("ask"), Limit: min(limit, ask.MaxLimit)}, nil
}
