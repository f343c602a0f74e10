package api

import (
	"errors"
	"net/http"

	"github.com/capdir/capdir/api/ownerkey"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/gate"
	"github.com/capdir/capdir/dispatcher/gate/token"
)

// Who may dispatch and discover (a document, the registry, ask): the owner
// (x-terminal-key) or the holder of a capability token (Authorization: Bearer
// <token>), who sees only the rows in its scope. Every other route is the owner's
// alone.

// caller reads r's credential, the owner key or a capability token that holds:
// the raw token and its claims for a token holder, "" and nil for the owner, or
// the refusal (a missing or wrong credential, a malformed Authorization header,
// both credentials, a token that does not hold with the gate's literal reason).
func (s *Server) caller(r *http.Request) (string, *token.Claims, error) {
	key, auth := r.Header.Get("x-terminal-key"), r.Header.Get("Authorization")
	switch {
	case key != "" && auth != "":
		return "", nil, badRequest(bothCredentialsMessage)
	case key != "":
		if err := s.ownerKey(r); errors.Is(err, ownerkey.ErrThrottled) {
			return "", nil, err
		} else if err != nil {
			return "", nil, errNoDispatchCredential
		}
		return "", nil, nil
	case auth == "":
		return "", nil, errNoDispatchCredential
	}
	tok, ok := token.FromAuthorization(auth)
	if !ok {
		return "", nil, errMalformedAuthorization
	}
	if s.cfg.Dispatcher == nil {
		return "", nil, ErrNoDispatcher
	}
	claims, refusal := s.cfg.Dispatcher.Caller(tok)
	if refusal != nil {
		return "", nil, &TokenRefusedError{Status: refusal.Status, Reason: refusal.Literal}
	}
	return tok, claims, nil
}

// viewer is who reads a document, the registry or an ask: the owner, or a token
// holder with its scope and risk ceiling (gate.Viewer). Its errors are caller's.
func (s *Server) viewer(r *http.Request) (contract.Viewer, error) {
	_, claims, err := s.caller(r)
	if err != nil {
		return contract.Viewer{}, err
	}
	return gate.Viewer(claims), nil
}

// IsOwnerKey compares key with the owner key in constant time: every owner route,
// dispatch and the console's sign-in check it here.
func (s *Server) IsOwnerKey(key string) bool { return s.isOwnerKey(key) }

func (s *Server) isOwnerKey(key string) bool { return s.cfg.OwnerKey.Is(key) }
