package token

import "strings"

// FromAuthorization is the token of an "Authorization: Bearer <token>" header
// value, as every entry point that takes a capability token reads it (the HTTP
// facade and its MCP server): the scheme in any case, then one token of at most
// MaxLen bytes with no whitespace. ok is false for anything else.
func FromAuthorization(h string) (tok string, ok bool) {
	const scheme = "bearer "
	if len(h) <= len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) {
		return "", false
	}
	tok = strings.TrimSpace(h[len(scheme):])
	if tok == "" || len(tok) > MaxLen || strings.ContainsAny(tok, " \t") {
		return "", false
	}
	return tok, true
}
