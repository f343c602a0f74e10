package api

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/capdir/capdir/dispatcher/gate/token"
)

// Who may dispatch: the owner (x-terminal-key) or the holder of a capability token
// (Authorization: Bearer <token>). Every other route is the owner's alone.

// dispatchCaller authenticates a dispatch before its body is read. It returns the
// raw token for a token holder, "" for the owner, or the refusal (answered by
// writeErr, the body not waited for). A token is checked here as the gate will
// check it (who the caller is: signature, expiry, revocation, audience, subject),
// so a token that does not hold is refused with nothing appended; what it may
// invoke is the gate's to decide.
func (s *Server) dispatchCaller(r *http.Request) (tok string, err error) {
	key, auth := r.Header.Get("x-terminal-key"), r.Header.Get("Authorization")
	switch {
	case key != "" && auth != "":
		return "", badRequest(bothCredentialsMessage)
	case key != "":
		if !s.isOwnerKey(key) {
			return "", errNoDispatchCredential
		}
		return "", nil
	case auth == "":
		return "", errNoDispatchCredential
	}
	tok, ok := bearerToken(auth)
	if !ok {
		return "", errMalformedAuthorization
	}
	if s.cfg.Dispatcher == nil {
		return "", ErrNoDispatcher
	}
	if _, refusal := s.cfg.Dispatcher.Caller(tok); refusal != nil {
		return "", &TokenRefusedError{Status: refusal.Status, Reason: refusal.Reason}
	}
	return tok, nil
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
