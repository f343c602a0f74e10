package console

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/capdir/capdir/api"
	"github.com/capdir/capdir/command"
	"github.com/capdir/capdir/internal/visible"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static/*
var staticFS embed.FS

// Console is the owner's console, an http.Handler for the paths under /console/.
// Close ends its live streams; it is idempotent.
type Console struct {
	cfg      Config
	cmd      *command.Side // every change: cfg.API's command side
	mux      *http.ServeMux
	pages    map[string]*template.Template
	sessions *sessions
	hub      *hub
	static   http.Handler

	closeOnce sync.Once
	closed    chan struct{}
}

// New builds the console over cfg's facade and projection. It follows the
// projection's commits from now on for its live pages.
func New(cfg Config) (*Console, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Console{cfg: cfg, cmd: cfg.API.Commands(), mux: http.NewServeMux(), closed: make(chan struct{}),
		sessions: newSessions(cfg.SessionIdle, cfg.MaxSessions, cfg.Clock)}
	if err := c.parse(); err != nil {
		return nil, err
	}
	sub, _ := fs.Sub(staticFS, "static")
	c.static = wholeFiles(http.StripPrefix("/console/static/", http.FileServerFS(sub)))
	c.hub = newHub()
	cfg.Projector.OnApplied(c.hub.applied)
	c.routes()
	return c, nil
}

// wholeFiles serves h's files whole: a request's Range is dropped. The files are
// a few KiB, and a request for thousands of one-byte ranges of one would be
// answered, to anyone, with a part and its headers for each: some 35 times the
// request's size.
func wholeFiles(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := r.Header["Range"]; ok {
			r = r.Clone(r.Context())
			r.Header.Del("Range")
		}
		h.ServeHTTP(w, r)
	})
}

// Close ends every live stream the console serves (an HTTP server's Shutdown
// would otherwise wait for them).
func (c *Console) Close() { c.closeOnce.Do(func() { close(c.closed) }) }

// ServeHTTP serves r with the console's security headers on every answer.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if !strings.HasPrefix(r.URL.Path, "/console/static/") {
		h.Set("Cache-Control", "no-store")
	}
	c.mux.ServeHTTP(w, r)
}

// CSP is the Content-Security-Policy of every console answer: its own script
// and stylesheet only, no inline script or style, never framed.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'"

func (c *Console) routes() {
	c.mux.Handle("GET /console", http.RedirectHandler("/console/", http.StatusSeeOther))
	c.mux.Handle("GET /console/static/", c.static)
	c.mux.HandleFunc("GET /console/signin", c.signInPage)
	c.mux.HandleFunc("POST /console/signin", c.signIn)
	c.mux.HandleFunc("POST /console/signout", c.change(c.signOut))
	c.registerDirectory()
	c.registerReceipts()
	c.registerApprovals()
	c.registerBreakers()
	c.registerTokens()
	c.mux.HandleFunc("GET /console/health", c.page(c.healthPage))
	c.mux.HandleFunc("/console/", c.page(func(w http.ResponseWriter, r *http.Request, ss *session) error {
		return errNotFound
	}))
}

// handler is a signed-in request's handler: it answers, or returns the error the
// console renders (as the API answers it).
type handler func(w http.ResponseWriter, r *http.Request, ss *session) error

// errNotFound is a console path that names nothing.
var errNotFound = fmt.Errorf("%w: no such console page", command.ErrNotFound)

// page serves a page to a signed-in browser; any other is sent to sign in.
func (c *Console) page(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ss := c.signedIn(w, r)
		if ss == nil {
			http.Redirect(w, r, "/console/signin?next="+url.QueryEscape(safeNext(r.URL.RequestURI())), http.StatusSeeOther)
			return
		}
		if r.Header.Get("X-Console-Live") == "" { // a live refresh leaves the outcome to the page it refreshes
			ss.notice = c.sessions.takeFlash(ss.id)
		}
		if err := h(w, r, ss); err != nil {
			c.renderError(w, r, ss, err)
		}
	}
}

// done ends a change: the page at path shows msg once.
func (c *Console) done(w http.ResponseWriter, r *http.Request, ss *session, path, msg string) {
	c.sessions.setFlash(ss.id, msg)
	seeOther(w, r, path)
}

// maxForm bounds a state-changing request's body.
const maxForm = 1 << 20

// change serves a state-changing request: only with a session, from the console's
// own origin, carrying the session's CSRF token (form field csrf or header
// X-CSRF-Token); anything else is refused before the handler runs.
func (c *Console) change(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ss := c.signedIn(w, r)
		if ss == nil {
			writeRefusal(w, http.StatusUnauthorized, msgSignedOut)
			return
		}
		if !sameOrigin(r) {
			writeRefusal(w, http.StatusForbidden, msgCrossOrigin)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil { // too large, or not a form: nothing is changed
			c.renderError(w, r, ss, badForm(err))
			return
		}
		tok := r.Header.Get("X-CSRF-Token")
		if tok == "" {
			tok = r.PostFormValue("csrf")
		}
		if !ss.validCSRF(tok) {
			writeRefusal(w, http.StatusForbidden, msgCSRF)
			return
		}
		if err := h(w, r, ss); err != nil {
			c.renderError(w, r, ss, err)
		}
	}
}

// sameOrigin is false when r says it comes from another site: by Sec-Fetch-Site,
// which browsers send, else by an Origin other than r's host. (Under
// Referrer-Policy: no-referrer a browser's own form posts carry Origin: null, so
// null says nothing; the CSRF token still decides.)
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin" || site == "none"
	}
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		u, err := url.Parse(o)
		return err == nil && u.Host == r.Host
	}
	return true
}

// signedIn is r's live session, its cookie renewed; nil without one.
func (c *Console) signedIn(w http.ResponseWriter, r *http.Request) *session {
	ck, err := r.Cookie(cookieName)
	if err != nil {
		return nil
	}
	ss := c.sessions.get(ck.Value)
	if ss != nil {
		http.SetCookie(w, c.cookie(r, ss))
	}
	return ss
}

// writeRefusal answers a refused request with its literal, as JSON.
func writeRefusal(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintln(w, body)
}

// view is what every page template gets.
type view struct {
	Title string
	Nav   string // the section the page belongs to
	CSRF  string // empty when signed out
	// Error is a refused request's answer, shown as the API gives it.
	Error *errView
	// Notice is a one-line outcome of the change that led here.
	Notice string
	Data   any
	// Live is the count of the live streams' notices when the page was
	// rendered (hub.generation), sent back by its stream as ?since=.
	Live uint64
}

// errView is an error as the API answers it: its status and JSON body.
type errView struct {
	Status int
	Body   string
}

// answerOf is err's API answer.
func answerOf(err error) *errView {
	status, body := api.ErrorAnswer(err)
	var b []byte
	switch v := body.(type) {
	case []byte:
		b = v
	case json.RawMessage:
		b = v
	default:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(v)
		b = bytes.TrimSpace(buf.Bytes())
	}
	return &errView{Status: status, Body: string(b)}
}

// render writes page with v, status 200 unless v.Error says otherwise.
func (c *Console) render(w http.ResponseWriter, page string, status int, v view) {
	t := c.pages[page]
	v.Live = c.hub.generation()
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		c.cfg.Logger.Error("console: render", "page", page, "err", err)
		http.Error(w, "console: the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// renderError shows err as the API answers it, on the error page.
func (c *Console) renderError(w http.ResponseWriter, r *http.Request, ss *session, err error) {
	ev := answerOf(err)
	c.render(w, "error", ev.Status, view{Title: "Refused", CSRF: csrfOf(ss), Error: ev})
}

func csrfOf(ss *session) string {
	if ss == nil {
		return ""
	}
	return ss.csrf
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"time": func(v any) string {
		var t time.Time
		switch v := v.(type) {
		case time.Time:
			t = v
		case *time.Time:
			if v != nil {
				t = *v
			}
		}
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"short": func(s string) string {
		if len(s) > 12 {
			return s[:12] + "…"
		}
		return s
	},
	"resetArgs": func(key, csrf string) map[string]string { return map[string]string{"Key": key, "CSRF": csrf} },
	// visible shows text from others (arguments, results, a row's content, an
	// upstream's answer) with the characters that would reorder or hide what the
	// page shows written as escapes (package visible): the owner decides on
	// what the text holds.
	"visible": func(v any) string {
		switch v := v.(type) {
		case string:
			return visible.String(v)
		case *string:
			if v == nil {
				return ""
			}
			return visible.String(*v)
		case nil:
			return ""
		}
		return visible.String(fmt.Sprint(v))
	},
}

// parse reads every page template with the layout.
func (c *Console) parse() error {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return err
	}
	c.pages = map[string]*template.Template{}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New(base).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return fmt.Errorf("console: template %s: %w", n, err)
		}
		c.pages[base] = t
	}
	return nil
}

// seeOther sends the browser on to path after a change (post, redirect, get).
func seeOther(w http.ResponseWriter, r *http.Request, path string) {
	http.Redirect(w, r, path, http.StatusSeeOther)
}
