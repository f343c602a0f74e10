package console

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/capdir/capdir/api"
	"github.com/capdir/capdir/api/ownerkey"
)

// maxSignIn bounds a sign-in's body: the key and the next path.
const maxSignIn = 8 << 10

// signInData is the sign-in page's.
type signInData struct {
	Next string
	Hint string
}

// signInPage is the sign-in form; a browser already signed in goes on.
func (c *Console) signInPage(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.URL.Query().Get("next"))
	if c.signedIn(w, r) != nil {
		seeOther(w, r, next)
		return
	}
	c.render(w, "signin", http.StatusOK, view{Title: "Sign in", Data: signInData{Next: next}})
}

// signIn exchanges the owner key, POSTed once, for a new session's cookie. The
// key is checked by the API's owner-key guard, so wrong keys here and on the API
// or /mcp count against one throttle per address: a wrong key is the API's 401;
// past the guard's limit the address is refused until its window passes. The key
// is neither logged nor put in any answer.
func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		writeRefusal(w, http.StatusForbidden, msgCrossOrigin)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxSignIn)
	bad := r.ParseForm() != nil // too large, or not a form: no key, but counted as a wrong one
	key := r.PostFormValue("key")
	next := safeNext(r.PostFormValue("next"))
	if key == "" && !bad {
		ev := answerOf(api.ErrUnauthorized)
		c.render(w, "signin", ev.Status, view{Title: "Sign in", Error: ev, Data: signInData{Next: next, Hint: msgNoKey}})
		return
	}
	if bad {
		key = "" // never the owner key: the guard counts it as a wrong one
	}
	addr := ownerkey.ClientAddr(r)
	var te *ownerkey.ThrottledError
	switch err := c.cfg.API.CheckOwnerKey(r, key); {
	case errors.As(err, &te):
		w.Header().Set("Retry-After", strconv.Itoa(te.RetryAfterSeconds()))
		ev := &errView{Status: http.StatusTooManyRequests, Body: msgRateLimited(te.Limit, te.Window, te.RetryAfter)}
		c.render(w, "signin", ev.Status, view{Title: "Sign in", Error: ev, Data: signInData{Next: "/console/"}})
		return
	case err != nil:
		c.cfg.Logger.Warn("console: sign-in with a wrong key", "addr", addr)
		ev := answerOf(api.ErrUnauthorized)
		c.render(w, "signin", ev.Status, view{Title: "Sign in", Error: ev, Data: signInData{Next: next, Hint: msgNoKey}})
		return
	}
	if ck, err := r.Cookie(cookieName); err == nil {
		c.sessions.remove(ck.Value) // a new session id at every sign-in
	}
	ss := c.sessions.create()
	http.SetCookie(w, c.cookie(r, ss))
	c.cfg.Logger.Info("console: signed in", "addr", addr)
	seeOther(w, r, next)
}

// signOut ends the session and clears its cookie.
func (c *Console) signOut(w http.ResponseWriter, r *http.Request, ss *session) error {
	c.sessions.remove(ss.id)
	http.SetCookie(w, c.cookie(r, nil))
	seeOther(w, r, "/console/signin")
	return nil
}

// maxNext bounds the next= a sign-in carries on: a console URL is short, and a
// longer one goes to /console/, so that no answer quotes a URL of any length
// (the redirect to sign in escapes it, the sign-in page HTML-escapes it).
const maxNext = 2 << 10

// safeNext is where to go after signing in: a console path of at most maxNext
// bytes, never another site.
func safeNext(next string) string {
	if len(next) > maxNext || !strings.HasPrefix(next, "/console/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return "/console/"
	}
	return next
}
