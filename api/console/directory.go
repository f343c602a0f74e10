package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/capdir/capdir/command"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/projector"
	"github.com/capdir/capdir/projector/ask"
)

func (c *Console) registerDirectory() {
	c.mux.HandleFunc("GET /console/{$}", c.page(c.directoryPage))
	c.mux.HandleFunc("GET /console/rows/new", c.page(c.newRowPage))
	c.mux.HandleFunc("POST /console/rows", c.change(c.createRow))
	c.mux.HandleFunc("GET /console/rows/{key}", c.page(c.rowPage))
	c.mux.HandleFunc("GET /console/rows/{key}/edit", c.page(c.editRowPage))
	c.mux.HandleFunc("POST /console/rows/{key}", c.change(c.replaceRow))
	c.mux.HandleFunc("POST /console/rows/{key}/enabled", c.change(c.setEnabled))
	c.mux.HandleFunc("GET /console/rows/{key}/delete", c.page(c.deleteRowPage))
	c.mux.HandleFunc("POST /console/rows/{key}/delete", c.change(c.deleteRow))
}

// dirMax is the most rows the directory page lists.
const dirMax = 1000

// dirFilter is the directory page's query: an ask (ranked by the ask index) or
// none (canonical order), and the filters.
type dirFilter struct {
	Ask, Type, Category, Auth, Enabled, Sensitive string
}

// authForms are the auth filter's choices (runner.DescribeAuth's forms).
var authForms = []string{"none", "bearer", "basic", "headers", "query", "oauth"}

func readDirFilter(q url.Values) (dirFilter, error) {
	f := dirFilter{Ask: q.Get("ask"), Type: q.Get("type"), Category: q.Get("category"), Auth: q.Get("auth"),
		Enabled: q.Get("enabled"), Sensitive: q.Get("sensitive")}
	switch {
	case f.Type != "" && !slices.Contains(contract.Types, f.Type):
		return f, badQuery("type must be one of " + strings.Join(contract.Types, ", "))
	case f.Auth != "" && !slices.Contains(authForms, f.Auth):
		return f, badQuery("auth must be one of " + strings.Join(authForms, ", "))
	case f.Enabled != "" && f.Enabled != "0" && f.Enabled != "1":
		return f, badQuery("enabled must be 0 or 1")
	case f.Sensitive != "" && f.Sensitive != "0" && f.Sensitive != "1":
		return f, badQuery("sensitive must be 0 or 1")
	}
	return f, nil
}

// keeps reports whether r passes the filters other than the ask.
func (f dirFilter) keeps(r *contract.Row) bool {
	form := runner.DescribeAuth(r.Auth).Form
	if form == "" {
		form = "none"
	}
	return (f.Type == "" || r.Type == f.Type) && (f.Category == "" || r.Category == f.Category) &&
		(f.Auth == "" || form == f.Auth) && (f.Enabled == "" || strconv.Itoa(r.Enabled) == f.Enabled) &&
		(f.Sensitive == "" || strconv.Itoa(r.Sensitive) == f.Sensitive)
}

// dirRow is one listed row.
type dirRow struct {
	contract.Row
	AuthForm string
	Score    float64
	Why      []string
}

type dirData struct {
	Filter    dirFilter
	Rows      []dirRow
	Total     int
	Types     []string
	AuthForms []string
}

// directoryPage lists the rows: in canonical order, or ranked by the ask index
// when the query has an ask, narrowed by the filters.
func (c *Console) directoryPage(w http.ResponseWriter, r *http.Request, ss *session) error {
	f, err := readDirFilter(r.URL.Query())
	if err != nil {
		return err
	}
	var rows []dirRow
	total := 0
	if strings.TrimSpace(f.Ask) != "" {
		rows, err = c.askRows(f)
		total = len(rows)
	} else {
		rows, total, err = c.listRows(f)
	}
	if err != nil {
		return err
	}
	c.render(w, "directory", http.StatusOK, view{Title: "Directory", Nav: "directory", CSRF: ss.csrf, Notice: ss.notice,
		Data: dirData{Filter: f, Rows: rows, Total: total, Types: contract.Types, AuthForms: authForms}})
	return nil
}

// listRows is the first dirMax rows f keeps, in canonical order, and how many it
// keeps in all.
func (c *Console) listRows(f dirFilter) (rows []dirRow, total int, err error) {
	err = c.cfg.Projector.Each(projector.Filter{Type: f.Type, Category: f.Category}, func(r *contract.Row) error {
		if !f.keeps(r) {
			return nil
		}
		if total++; len(rows) < dirMax {
			rows = append(rows, dirRow{Row: *r, AuthForm: runner.DescribeAuth(r.Auth).Form})
		}
		return nil
	})
	if err != nil {
		return nil, 0, unavailable(err)
	}
	return rows, total, nil
}

// askRows ranks the enabled rows for the ask, as GET /api/dispatch?ask= does for
// the owner.
func (c *Console) askRows(f dirFilter) ([]dirRow, error) {
	a, err := c.cfg.Ask.Search(ask.Query{Text: f.Ask, Limit: ask.MaxLimit})
	if err != nil {
		return nil, badQuery(err.Error())
	}
	var rows []dirRow
	for _, res := range a.Results {
		row, _, err := c.cfg.Projector.Row(res.Key)
		if errors.Is(err, projector.ErrNotFound) {
			continue // deleted since it was indexed
		} else if err != nil {
			return nil, unavailable(err)
		}
		if f.keeps(&row) {
			rows = append(rows, dirRow{Row: row, AuthForm: runner.DescribeAuth(row.Auth).Form, Score: res.Score, Why: res.Why})
		}
	}
	return rows, nil
}

// rowData is the row page's.
type rowData struct {
	Row         contract.Row
	Fingerprint string
	Document    string
	AuthForm    string
}

// rowPage shows a row, its contract fingerprint and its contract document as the
// owner reads it.
func (c *Console) rowPage(w http.ResponseWriter, r *http.Request, ss *session) error {
	row, err := c.row(r.Context(), r.PathValue("key"))
	if err != nil {
		return err
	}
	doc := c.cfg.API.Document(&row, contract.Owner())
	c.render(w, "row", http.StatusOK, view{Title: row.Key, Nav: "directory", CSRF: ss.csrf, Notice: ss.notice,
		Data: rowData{Row: row, Fingerprint: contract.Fingerprint(&row), Document: string(doc.Markdown()), AuthForm: runner.DescribeAuth(row.Auth).Form}})
	return nil
}

// row reads key's row as GET /api/directory/{key} does.
func (c *Console) row(ctx context.Context, key string) (contract.Row, error) {
	if err := contract.ValidateKey(key); err != nil {
		return contract.Row{}, command.WithKey(key, err)
	}
	row, _, err := c.cmd.Directory().Row(ctx, key)
	return row, err
}

// formData is the create and edit forms': the values to show, and whether the
// key is fixed (an edit).
type formData struct {
	Row   contract.Row
	Edit  bool
	Types []string
}

func (c *Console) newRowPage(w http.ResponseWriter, r *http.Request, ss *session) error {
	c.renderForm(w, ss, http.StatusOK, contract.Row{Type: "fn", Enabled: 1, PlannerVisible: 1, PlannerRank: 100}, false, nil)
	return nil
}

func (c *Console) editRowPage(w http.ResponseWriter, r *http.Request, ss *session) error {
	row, err := c.row(r.Context(), r.PathValue("key"))
	if err != nil {
		return err
	}
	c.renderForm(w, ss, http.StatusOK, row, true, nil)
	return nil
}

// renderForm shows the row form with values, and a refused write's answer above it.
func (c *Console) renderForm(w http.ResponseWriter, ss *session, status int, row contract.Row, edit bool, ev *errView) {
	title := "New row"
	if edit {
		title = "Edit " + row.Key
	}
	c.render(w, "rowform", status, view{Title: title, Nav: "directory", CSRF: ss.csrf, Error: ev,
		Data: formData{Row: row, Edit: edit, Types: contract.Types}})
}

// formFields are the row form's text fields, by their column name.
var formFields = []string{"key", "type", "target", "auth", "content", "category", "allowed_categories",
	"input_schema", "examples", "runner", "includes"}

// formFlags are its checkboxes.
var formFlags = []string{"enabled", "planner_visible", "sensitive"}

// rowBody is the JSON body the form's values make, as the REST API would be sent
// it: the form's non-empty text fields, its flags, and planner_rank (a number when
// it is one, else as typed, for the contract to refuse with its literal).
func rowBody(form url.Values) []byte {
	m := map[string]any{}
	for _, f := range formFields {
		if v := form.Get(f); v != "" {
			m[f] = v
		}
	}
	for _, f := range formFlags {
		m[f] = form.Get(f) == "1"
	}
	if v := strings.TrimSpace(form.Get("planner_rank")); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			m["planner_rank"] = n
		} else {
			m["planner_rank"] = v
		}
	}
	b, _ := json.Marshal(m) // strings, bools and ints only: cannot fail
	return b
}

// formRow is what the form showed, to show again beside a refusal.
func formRow(form url.Values) contract.Row {
	r := contract.Row{Key: form.Get("key"), Type: form.Get("type"), Target: form.Get("target"), Auth: form.Get("auth"),
		Content: form.Get("content"), Category: form.Get("category"), AllowedCategories: form.Get("allowed_categories"),
		InputSchema: form.Get("input_schema"), Examples: form.Get("examples"), Runner: form.Get("runner"), Includes: form.Get("includes")}
	r.PlannerRank, _ = strconv.Atoi(form.Get("planner_rank"))
	flag := func(n string) int {
		if form.Get(n) == "1" {
			return 1
		}
		return 0
	}
	r.Enabled, r.PlannerVisible, r.Sensitive = flag("enabled"), flag("planner_visible"), flag("sensitive")
	return r
}

// createRow writes a new row through the directory's write path (POST
// /api/directory's); a refusal is shown on the form with its literal.
func (c *Console) createRow(w http.ResponseWriter, r *http.Request, ss *session) error {
	f, err := contract.DecodeFields(rowBody(r.PostForm))
	if err == nil {
		var res command.WriteResult
		res, err = c.cmd.Directory().Create(r.Context(), f)
		if err == nil {
			c.done(w, r, ss, "/console/rows/"+url.PathEscape(res.Key), writtenNotice("Created "+res.Key+".", res.Warnings))
			return nil
		}
	}
	ev := answerOf(err)
	c.renderForm(w, ss, ev.Status, formRow(r.PostForm), false, ev)
	return nil
}

// replaceRow writes the edited row whole (PUT /api/directory/{key}'s path).
func (c *Console) replaceRow(w http.ResponseWriter, r *http.Request, ss *session) error {
	key := r.PathValue("key")
	form := r.PostForm
	form.Set("key", key)
	f, err := contract.DecodeFields(rowBody(form))
	if err == nil {
		var res command.WriteResult
		res, err = c.cmd.Directory().Replace(r.Context(), key, f)
		if err == nil {
			c.done(w, r, ss, "/console/rows/"+url.PathEscape(key), writtenNotice("Saved "+key+".", res.Warnings))
			return nil
		}
	}
	ev := answerOf(err)
	c.renderForm(w, ss, ev.Status, formRow(form), true, ev)
	return nil
}

// writtenNotice is the notice of an accepted write: what was done, and, when the
// row cannot run as written, the literal every call of it will fail with.
func writtenNotice(done string, warnings []string) string {
	if len(warnings) == 0 {
		return done
	}
	return done + " It cannot run as written: every call of it will fail with " + strings.Join(warnings, ", ") + "."
}

// setEnabled patches the row's enabled flag (PATCH /api/directory/{key}'s path).
func (c *Console) setEnabled(w http.ResponseWriter, r *http.Request, ss *session) error {
	key := r.PathValue("key")
	v := r.PostFormValue("enabled")
	if v != "0" && v != "1" {
		return badQuery("enabled must be 0 or 1")
	}
	f, err := contract.DecodeFields([]byte(`{"enabled":` + v + `}`))
	if err != nil {
		return err
	}
	if _, err := c.cmd.Directory().Patch(r.Context(), key, f); err != nil {
		return err
	}
	done := "Enabled " + key + "."
	if v == "0" {
		done = "Disabled " + key + "."
	}
	c.done(w, r, ss, "/console/rows/"+url.PathEscape(key), done)
	return nil
}

// deleteRowPage asks for confirmation before a delete.
func (c *Console) deleteRowPage(w http.ResponseWriter, r *http.Request, ss *session) error {
	row, err := c.row(r.Context(), r.PathValue("key"))
	if err != nil {
		return err
	}
	c.render(w, "delete", http.StatusOK, view{Title: "Delete " + row.Key + "?", Nav: "directory", CSRF: ss.csrf, Data: row})
	return nil
}

// deleteRow deletes the row (DELETE /api/directory/{key}'s path) once confirmed.
func (c *Console) deleteRow(w http.ResponseWriter, r *http.Request, ss *session) error {
	key := r.PathValue("key")
	if r.PostFormValue("confirm") != key {
		return badQuery("type the row's key to confirm the delete")
	}
	if _, err := c.cmd.Directory().Delete(r.Context(), key); err != nil {
		return err
	}
	c.done(w, r, ss, "/console/", "Deleted "+key+".")
	return nil
}
