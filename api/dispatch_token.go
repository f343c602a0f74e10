package api

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/capdir/capdir/dispatcher/gate/token"
)

// Who may dispatch: the owner (x-terminal-key) or the holder of a capability token
// (Authorization: Bearer <token>). Every other route is the owner's alone.

// dispatchCaller authenticates a dispatch. It returns the raw token for a token
// holder, "" for the owner, and ok=false once it has answered a refusal itself. A
// token is checked here as the gate will check it (who the caller is: signature,
// expiry, revocation, audience, subject), so a token that does not hold is refused
// with nothing appended; what it may invoke is the gate's to decide.
func (s *Server) dispatchCaller(w http.ResponseWriter, r *http.Request) (tok string, ok bool) {
	key, auth := r.Header.Get("x-terminal-key"), r.Header.Get("Authorization")
	switch {
	case key != "" && auth != "":
		closeUnread(w, r)
		writeJSON(w, http.StatusBadRequest, bothCredentialsBody)
		return "", false
	case key != "":
		if !s.isOwnerKey(key) {
			closeUnread(w, r)
			writeJSON(w, http.StatusUnauthorized, noDispatchCredentialBody)
			return "", false
		}
		return "", true
	case auth == "":
		closeUnread(w, r)
		writeJSON(w, http.StatusUnauthorized, noDispatchCredentialBody)
		return "", false
	}
	tok, ok = bearerToken(auth)
	if !ok {
		closeUnread(w, r)
		writeJSON(w, http.StatusUnauthorized, malformedAuthorizationBody)
		return "", false
	}
	if s.cfg.Dispatcher == nil {
		closeUnread(w, r)
		writeError(w, http.StatusServiceUnavailable, "dispatch is not running on this node")
		return "", false
	}
	if _, refusal := s.cfg.Dispatcher.Caller(tok); refusal != nil {
		closeUnread(w, r)
		writeJSON(w, tokenRefusalStatus(refusal.Status), tokenRefusedAnswer(refusal.Reason, refusal.Status))
		return "", false
	}
	return tok, true
}

// isOwnerKey compares key with the owner key in constant time.
func (s *Server) isOwnerKey(key string) bool {
	return subtle.ConstantTimeCompare([]byte(key), []byte(s.cfg.TerminalKey)) == 1
}

// bearerToken is the token of an "Authorization: Bearer <token>" header: the
// scheme in any case, one token of at most token.MaxLen bytes with no whitespace.
func bearerToken(h string) (string, bool) {
	const scheme = "bearer "
	if len(h) <= len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) {
		return "", false
	}
	tok := strings.TrimSpace(h[len(scheme):])
	if tok == "" || len(tok) > token.MaxLen || strings.ContainsAny(tok, " \t") {
		return "", false
	}
	return tok, true
}
