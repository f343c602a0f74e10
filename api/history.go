package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/capdir/capdir/command"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/projector"
)

// The ledger's read side: a row's history, the directory at a point in time and
// the contract a receipt ran under, all read from the log (projector/history.go).

// registerHistory adds the history routes. All of them are owner routes.
func (s *Server) registerHistory() {
	s.handle("GET /api/directory/{key}/history", s.owner(s.rowHistory))
	s.handle("GET /api/receipts/{id}/contract", s.owner(s.receiptContract))
}

// atForms is what ?at= accepts, as its refusal says.
const atForms = "at must be a control-stream sequence (a whole number, as the seq of GET /api/directory/KEY/history; 0 is before the first event) or an RFC 3339 time such as 2026-12-01T10:00:00Z"

// parseAt reads ?at=: ok is false when r has none.
func parseAt(r *http.Request) (p projector.Point, ok bool, err error) {
	v := r.URL.Query().Get("at")
	if !r.URL.Query().Has("at") {
		return p, false, nil
	}
	if n, perr := strconv.ParseUint(v, 10, 64); perr == nil {
		// 0 is before the first event: the empty directory a time before the
		// log's first event answers as "at":0, asked for again by its sequence.
		return projector.Point{Seq: n, Start: n == 0}, true, nil
	}
	if t, terr := time.Parse(time.RFC3339Nano, v); terr == nil {
		return projector.Point{Time: t}, true, nil
	}
	return p, false, fmt.Errorf("%w: %s; got %q", ErrBadQuery, atForms, clipQuery(v))
}

// clipQuery keeps a refused value short enough to quote back.
func clipQuery(v string) string {
	if len(v) > 64 {
		return v[:64] + "…"
	}
	return v
}

// historyErr maps the errors of the history queries to the facade's.
func historyErr(key string, err error) error {
	var beyond *projector.BeyondLogError
	switch {
	case errors.As(err, &beyond):
		return fmt.Errorf("%w: %s; ask for at most at=%d, or a time", ErrBadQuery, beyond.Error(), beyond.LastSeq)
	case errors.Is(err, projector.ErrNotFound):
		return command.WithKey(key, ErrNotFound)
	}
	return command.WithKey(key, command.Unavailable(err))
}

// rowHistory is GET /api/directory/{key}/history: every mutation of the row in
// log order, also after it was deleted. A key never written has no history: 404.
func (s *Server) rowHistory(w http.ResponseWriter, r *http.Request) error {
	key := r.PathValue("key")
	if err := contract.ValidateKey(key); err != nil {
		return command.WithKey(key, err)
	}
	h, err := s.cfg.Projector.History(r.Context(), key)
	if err != nil {
		return historyErr(key, err)
	}
	if len(h) == 0 {
		return command.WithKey(key, ErrNotFound)
	}
	writeJSON(w, http.StatusOK, struct {
		Key     string            `json:"key"`
		Changes []contract.Change `json:"changes"`
	}{key, h})
	return nil
}

// rowAt is GET /api/directory/{key}?at=…: the row as it stood then, with the
// sequence of the mutation that wrote it.
func (s *Server) rowAt(w http.ResponseWriter, r *http.Request, key string, at projector.Point) error {
	row, seq, err := s.cfg.Projector.RowAt(r.Context(), key, at)
	if err != nil {
		return historyErr(key, err)
	}
	writeJSON(w, http.StatusOK, struct {
		contract.Row
		Mutation uint64 `json:"mutation_seq"`
	}{row, seq})
	return nil
}

// listAt is GET /api/directory?at=…: the directory as it stood then, filtered and
// paged as the live list is, with the last sequence it includes.
func (s *Server) listAt(w http.ResponseWriter, r *http.Request, at projector.Point) error {
	filter, limit, offset, err := parseListQuery(r)
	if err != nil {
		return err
	}
	snap, err := s.cfg.Projector.DirectoryAt(r.Context(), at)
	if err != nil {
		return historyErr("", err)
	}
	rows, total, err := snap.List(filter, offset, limit)
	if err != nil {
		return historyErr("", err)
	}
	writeJSON(w, http.StatusOK, struct {
		dirPage
		At uint64 `json:"at"`
	}{dirPage{Rows: rows, Total: total, Limit: limit, Offset: offset}, snap.Seq})
	return nil
}

// documentAt is GET /api/dispatch?key=…&format=…&at=…: the row's contract
// document as it stood then. Only the owner reads the past.
func (s *Server) documentAt(w http.ResponseWriter, r *http.Request, v contract.Viewer) error {
	if v.Role != contract.RoleOwner {
		return errOwnerOnly
	}
	at, _, err := parseAt(r)
	if err != nil {
		return err
	}
	key := r.URL.Query().Get("key")
	row, _, err := s.cfg.Projector.RowAt(r.Context(), key, at)
	switch {
	case errors.Is(err, projector.ErrNotFound) || err == nil && !v.Discovers(&row):
		return &documentNotFound{key: key}
	case err != nil:
		return historyErr(key, err)
	}
	return s.writeDocument(w, &row, r.URL.Query().Get("format"), v)
}

// receiptContract is GET /api/receipts/{id}/contract: the row the call ran under,
// whose contract fingerprint is the receipt's, also after the row changed or was
// deleted.
func (s *Server) receiptContract(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	rc, pending, err := s.receipt(r, id, false)
	switch {
	case err != nil:
		return err
	case pending:
		writeJSON(w, http.StatusAccepted, map[string]any{"pending": true, "invocation_id": id})
		return nil
	}
	row, seq, err := s.cfg.Projector.ContractOf(r.Context(), &rc)
	if err != nil {
		return historyErr(rc.Key, err)
	}
	writeJSON(w, http.StatusOK, struct {
		InvocationID string       `json:"invocation_id"`
		Mutation     uint64       `json:"mutation_seq"`
		Fingerprint  string       `json:"fingerprint"`
		Row          contract.Row `json:"row"`
	}{id, seq, contract.Fingerprint(&row), row})
	return nil
}
