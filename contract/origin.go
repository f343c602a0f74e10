package contract

import (
	"errors"
	"net/url"
	"strings"
)

// The origin of a credentialed row is a property of the row, not of the call. A
// row whose auth column names a credential sends it to the origin (scheme, host,
// port) its target's URL template writes out in literal text, and nowhere else:
//
//   - on write, a row with auth run by the http runner whose target puts a slot
//     ($1, $2+, $$1, $NAME, $PREV, or any other '$') in the scheme, user info,
//     host or port is refused (CheckCredentialOrigin);
//   - at run time, the http runner refuses to send a credentialed call whose final
//     URL's origin is not the template's literal origin (TemplateOrigin), which
//     also holds for a row stored before the write rule.
//
// A row without auth may keep a slot in its host: a deliberate "fetch any URL"
// capability that carries no credential.

// ErrOriginNotLiteral: a URL template's origin is not literal text, so the
// arguments of a call would choose it.
var ErrOriginNotLiteral = errors.New("origin is not literal")

// URLOrigin is u's origin as capdir compares origins: scheme://host[:port], lower
// case, without user info.
func URLOrigin(u *url.URL) string {
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// originPart is the part of a URL template that holds its scheme, user info, host
// and port: up to the first '/', '?' or '#' after "://", or, without "://", up to
// the first '?' or '#' (a template whose scheme cannot be told apart from its host).
func originPart(tmpl string) string {
	i := strings.Index(tmpl, "://")
	if i < 0 {
		if j := strings.IndexAny(tmpl, "?#"); j >= 0 {
			return tmpl[:j]
		}
		return tmpl
	}
	rest := tmpl[i+3:]
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		rest = rest[:j]
	}
	return tmpl[:i+3] + rest
}

// TemplateOrigin is the origin (as URLOrigin gives it) that the URL template tmpl
// names in literal text: its scheme, host and port, each free of any '$'. User
// info is not part of an origin, and a slot there does not make the origin
// unknown (the final URL is compared whole). The error matches
// ErrOriginNotLiteral, and its text is the origin part as tmpl writes it (user
// info dropped), for the refusal to quote.
func TemplateOrigin(tmpl string) (string, error) {
	part := originPart(strings.TrimSpace(tmpl))
	shown := part
	if scheme, authority, ok := strings.Cut(part, "://"); ok {
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			authority = authority[at+1:]
		}
		shown = scheme + "://" + authority
	}
	notLiteral := &originError{shown: shown}
	if strings.Contains(shown, "$") || !strings.Contains(shown, "://") {
		return "", notLiteral
	}
	u, err := url.Parse(shown)
	if err != nil || u.Host == "" {
		return "", notLiteral
	}
	return URLOrigin(u), nil
}

// originError is ErrOriginNotLiteral, quoting the origin part of the template.
type originError struct{ shown string }

func (e *originError) Error() string { return e.shown }
func (e *originError) Unwrap() error { return ErrOriginNotLiteral }

// CheckCredentialOrigin refuses a row with auth, run by the http runner, whose
// target puts a '$' anywhere before its path (in the method, scheme, user info,
// host or port): a caller's arguments would then choose where the credential is
// sent. Rows without auth, and rows of other runners, pass.
func CheckCredentialOrigin(r *Row) error {
	if strings.TrimSpace(r.Auth) == "" || r.EffectiveRunner() != TypeHTTP {
		return nil
	}
	// The method and the URL are read apart, as the runner reads them: a method
	// that holds "://" itself must not be taken for the URL's scheme.
	method, u := CutHTTPTarget(r.Target)
	if !strings.Contains(method, "$") && !strings.Contains(originPart(u), "$") {
		return nil
	}
	return fieldErr(ErrInvalid, "target",
		"%q puts a slot before the path (in the method, scheme, user info, host or port) of a row with auth, so a caller's arguments would choose where the credential is sent; "+
			"write the origin out in the target (scheme://host[:port]/) and keep slots in the path, query or body, or drop auth (a row without auth may take its host from a slot)",
		r.Target)
}

// CutHTTPTarget reads an http target as the http runner does: "METHOD url" with
// the method upper-cased, or a bare url, which means GET. Neither part is checked.
func CutHTTPTarget(target string) (method, url string) {
	t := strings.TrimSpace(target)
	method, url, ok := strings.Cut(t, " ")
	if !ok {
		return "GET", t
	}
	return strings.ToUpper(strings.TrimSpace(method)), strings.TrimSpace(url)
}
