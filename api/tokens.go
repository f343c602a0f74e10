package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/capdir/capdir/command"
)

// registerTokens adds the capability-token routes, both the owner's:
//
//	POST   /api/tokens        mint: {sub, scope:{keys,categories}, risk, pin?, body?,
//	                          max_payload?, ttl_seconds?} -> 201 {token, jti, exp, claims};
//	                          "pin":"current" pins the one scoped row's contract now
//	DELETE /api/tokens/{jti}  revoke: append TOKEN_REVOKED, answer once it is folded here
//
// Minting appends nothing: a token is its own record, and the owner's answer is
// the only copy of it. capdir never logs or stores a token it mints.
func (s *Server) registerTokens() {
	s.handle("POST /api/tokens", s.owner(s.mintToken))
	s.handle("DELETE /api/tokens/{jti}", s.owner(s.revokeToken))
}

// maxMintBody bounds a mint request: a fixed body may take up most of a token.
const maxMintBody = 64 << 10

func (s *Server) mintToken(w http.ResponseWriter, r *http.Request) error {
	var in command.MintRequest
	if err := decodeOne(http.MaxBytesReader(w, r.Body, maxMintBody), &in); err != nil {
		return badRequest(mintBodyError(err))
	}
	ans, err := s.cmd.Tokens().Mint(in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, ans)
	return nil
}

// revokeAnswer is DELETE /api/tokens/{jti}'s answer.
type revokeAnswer struct {
	OK      bool   `json:"ok"`
	JTI     string `json:"jti"`
	Revoked bool   `json:"revoked"`
}

// revokeToken appends TOKEN_REVOKED for the token id and answers once this node's
// projection has folded it: from then on no request entering this node runs with
// the token, and no worker of the deployment runs it either (see the dispatcher's
// revocation.go). A token this node already holds as revoked appends nothing.
func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) error {
	jti := r.PathValue("jti")
	if err := s.cmd.Tokens().Revoke(r.Context(), jti); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, revokeAnswer{OK: true, JTI: jti, Revoked: true})
	return nil
}

// mintShapeHint is how a POST /api/tokens body looks.
const mintShapeHint = `send {"sub":"NAME","scope":{"keys":["KEY"],"categories":["CAT"]},"risk":"low"} ` +
	`(optional "pin", "body", "max_payload", "ttl_seconds")`

// mintBodyError is the 400 message for a POST /api/tokens body that does not decode.
func mintBodyError(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return fmt.Sprintf("the body is over %d bytes; %s", maxMintBody, mintShapeHint)
	case errors.Is(err, errTrailingData):
		return err.Error() + "; " + mintShapeHint
	case errors.As(err, &te):
		if hint, ok := mintFieldHints[te.Field]; ok {
			return hint
		}
		return "the body must be a JSON object; " + mintShapeHint
	case errors.As(err, &se):
		return fmt.Sprintf("malformed JSON at byte %d (%s); %s", se.Offset, se.Error(), mintShapeHint)
	case errors.Is(err, io.EOF):
		return "empty body; " + mintShapeHint
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the body ends before its JSON object is closed; " + mintShapeHint
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return strings.TrimPrefix(err.Error(), "json: ") + "; " + mintShapeHint
	}
	return "malformed body: " + err.Error() + "; " + mintShapeHint
}

// mintFieldHints name what each field of a mint request must hold.
var mintFieldHints = map[string]string{
	"sub":              `"sub" must be a string naming the holder, like "billing-agent"`,
	"scope":            `"scope" must be an object {"keys":["KEY",…],"categories":["CAT",…]}`,
	"scope.keys":       `"scope.keys" must be an array of row keys, like ["GREET"]`,
	"scope.categories": `"scope.categories" must be an array of categories, like ["demo"]`,
	"risk":             `"risk" must be "low" or "high"`,
	"pin":              `"pin" must be a contract fingerprint (64 lower-case hex digits), or "current"`,
	"body":             `"body" must be a string: the only body the token may send`,
	"max_payload":      `"max_payload" must be a whole number of bytes`,
	"ttl_seconds":      `"ttl_seconds" must be a whole number of seconds`,
}
