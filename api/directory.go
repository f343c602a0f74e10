package api

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/capdir/capdir/command"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/projector"
)

// Paging of GET /api/directory.
const (
	dirDefaultLimit = 100
	dirMaxLimit     = 1000
)

// registerDirectory adds the directory routes. All of them are owner routes.
func (s *Server) registerDirectory() {
	s.handle("GET /api/directory", s.owner(s.listDirectory))
	s.handle("POST /api/directory", s.owner(s.createRow))
	s.handle("POST /api/directory/import", s.owner(s.importDirectory))
	s.handle("GET /api/directory/{key}", s.owner(s.getRow))
	s.handle("PUT /api/directory/{key}", s.owner(s.replaceRow))
	s.handle("PATCH /api/directory/{key}", s.owner(s.patchRow))
	s.handle("DELETE /api/directory/{key}", s.owner(s.deleteRow))
}

// dirWriteResponse is the answer to an accepted POST, PUT or PATCH: the documented
// {"ok":true,"key":…,"updated_at":…}, plus the PATCH body fields that were ignored.
type dirWriteResponse struct {
	OK        bool     `json:"ok"`
	Key       string   `json:"key"`
	UpdatedAt string   `json:"updated_at"`
	Ignored   []string `json:"ignored,omitempty"`
	// Warnings: the literals every call of the row will fail with as written.
	Warnings []string `json:"warnings,omitempty"`
}

func okResponse(res command.WriteResult) dirWriteResponse {
	return dirWriteResponse{OK: true, Key: res.Key, UpdatedAt: res.Row.UpdatedAt, Ignored: res.Ignored, Warnings: res.Warnings}
}

// readFields reads a request body of at most one row's size (the Directory's row
// limit) and decodes it with contract.DecodeFields. what names the body in messages.
func (s *Server) readFields(w http.ResponseWriter, r *http.Request, what string) (contract.Fields, error) {
	body, err := readBody(w, r, s.dir.RowLimit(), what)
	if err != nil {
		return contract.Fields{}, err
	}
	return contract.DecodeFields(body)
}

// createRow is POST /api/directory: 201 {"ok":true,"key":…,"updated_at":…}.
func (s *Server) createRow(w http.ResponseWriter, r *http.Request) error {
	f, err := s.readFields(w, r, "the row")
	if err != nil {
		return err
	}
	res, err := s.dir.Create(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, okResponse(res))
	return nil
}

// replaceRow is PUT /api/directory/{key}: 201 when it created the row, else 200.
func (s *Server) replaceRow(w http.ResponseWriter, r *http.Request) error {
	key := r.PathValue("key")
	f, err := s.readFields(w, r, "the row")
	if err != nil {
		return command.WithKey(key, err)
	}
	res, err := s.dir.Replace(r.Context(), key, f)
	if err != nil {
		return err
	}
	if res.Created {
		writeJSON(w, http.StatusCreated, okResponse(res))
		return nil
	}
	writeJSON(w, http.StatusOK, okResponse(res))
	return nil
}

// patchRow is PATCH /api/directory/{key}: 200, with "ignored" naming the body
// fields outside the allow-list.
func (s *Server) patchRow(w http.ResponseWriter, r *http.Request) error {
	key := r.PathValue("key")
	f, err := s.readFields(w, r, "the patch")
	if err != nil {
		return command.WithKey(key, err)
	}
	res, err := s.dir.Patch(r.Context(), key, f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, okResponse(res))
	return nil
}

// deleteRow is DELETE /api/directory/{key}: 200 {"ok":true,"key":…,"deleted":1}.
func (s *Server) deleteRow(w http.ResponseWriter, r *http.Request) error {
	key := r.PathValue("key")
	if _, err := s.dir.Delete(r.Context(), key); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		OK      bool   `json:"ok"`
		Key     string `json:"key"`
		Deleted int    `json:"deleted"`
	}{true, key, 1})
	return nil
}

// getRow is GET /api/directory/{key}: the row with its row_num.
func (s *Server) getRow(w http.ResponseWriter, r *http.Request) error {
	key := r.PathValue("key")
	if err := contract.ValidateKey(key); err != nil {
		return command.WithKey(key, err)
	}
	if at, ok, err := parseAt(r); err != nil || ok {
		if err != nil {
			return err
		}
		return s.rowAt(w, r, key, at)
	}
	row, _, err := s.dir.Row(r.Context(), key)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, row)
	return nil
}

// dirPage is the answer to GET /api/directory.
type dirPage struct {
	Rows   []contract.Row `json:"rows"`
	Total  int            `json:"total"`
	Limit  int            `json:"limit"`
	Offset int            `json:"offset"`
}

// listDirectory is GET /api/directory?category=&type=&enabled=&limit=&offset=: rows in
// canonical order, each with its row_num.
func (s *Server) listDirectory(w http.ResponseWriter, r *http.Request) error {
	if at, ok, err := parseAt(r); err != nil || ok {
		if err != nil {
			return err
		}
		return s.listAt(w, r, at)
	}
	filter, limit, offset, err := parseListQuery(r)
	if err != nil {
		return err
	}
	rows, total, err := s.cfg.Projector.List(filter, offset, limit)
	if err != nil {
		return command.Unavailable(err)
	}
	writeJSON(w, http.StatusOK, dirPage{Rows: rows, Total: total, Limit: limit, Offset: offset})
	return nil
}

// parseListQuery reads the filters and paging of GET /api/directory. limit defaults
// to 100 and is capped at 1000; offset defaults to 0.
func parseListQuery(r *http.Request) (f projector.Filter, limit, offset int, err error) {
	q := r.URL.Query()
	f.Category = q.Get("category")
	f.Type = q.Get("type")
	if f.Type != "" && !slices.Contains(contract.Types, f.Type) {
		return f, 0, 0, fmt.Errorf("%w: type must be one of fn, http, agent, flow; got %q", ErrBadQuery, f.Type)
	}
	if v := q.Get("enabled"); v != "" {
		var e int
		switch v {
		case "1", "true":
			e = 1
		case "0", "false":
			e = 0
		default:
			return f, 0, 0, fmt.Errorf("%w: enabled must be 0 or 1; got %q", ErrBadQuery, v)
		}
		f.Enabled = &e
	}
	limit, err = queryInt(q.Get("limit"), "limit", dirDefaultLimit, 1)
	if err != nil {
		return f, 0, 0, err
	}
	offset, err = queryInt(q.Get("offset"), "offset", 0, 0)
	if err != nil {
		return f, 0, 0, err
	}
	return f, min(limit, dirMaxLimit), offset, nil
}

func queryInt(v, name string, def, least int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < least {
		return 0, fmt.Errorf("%w: %s must be an integer of at least %d; got %q", ErrBadQuery, name, least, v)
	}
	return n, nil
}
