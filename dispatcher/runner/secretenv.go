package runner

import (
	"fmt"
	"strings"
)

// DefaultSecretEnv is the allow-list when the operator sets none: variables whose
// names end in _API_KEY or _TOKEN, the usual names of API credentials. capdir's
// own variables are never allowed, whatever the list says (ReservedEnv).
var DefaultSecretEnv = []string{"*_API_KEY", "*_TOKEN"}

// SecretEnv is the operator's allow-list of the environment variables a row's auth
// column may name. The zero value allows none. It is immutable and safe for
// concurrent use.
type SecretEnv struct {
	patterns []string
}

// ParseSecretEnv builds an allow-list. Each argument may hold several patterns
// separated by commas (as --secret-env and CAPDIR_SECRET_ENV give them); blanks are
// skipped, so no pattern at all allows none. A pattern is a variable name
// (ACME_API_KEY), a prefix (ACME_*), a suffix (*_TOKEN), or * (every variable that
// is not capdir's own). Errors wrap ErrBadSecretEnv and name the pattern.
func ParseSecretEnv(patterns ...string) (SecretEnv, error) {
	var s SecretEnv
	for _, arg := range patterns {
		for _, p := range strings.Split(arg, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			if err := checkPattern(p); err != nil {
				return SecretEnv{}, err
			}
			s.patterns = append(s.patterns, p)
		}
	}
	return s, nil
}

// checkPattern accepts NAME, PREFIX*, *SUFFIX and *, where the name part is letters,
// digits and '_'.
func checkPattern(p string) error {
	if p == "*" {
		return nil
	}
	body := strings.TrimSuffix(strings.TrimPrefix(p, "*"), "*")
	if len(body) < len(p)-1 {
		body = "" // a '*' at both ends
	}
	for i := 0; i < len(body); i++ {
		if c := body[i]; !(isNameByte(c) || 'a' <= c && c <= 'z') {
			body = ""
			break
		}
	}
	if body == "" {
		return fmt.Errorf("%w: %q: want a variable name (ACME_API_KEY), a prefix (ACME_*), a suffix (*_TOKEN) or *; names are letters, digits and '_'",
			ErrBadSecretEnv, p)
	}
	return nil
}

// Patterns returns the patterns, in the order given.
func (s SecretEnv) Patterns() []string { return append([]string(nil), s.patterns...) }

// String is the patterns joined with commas, as --secret-env takes them.
func (s SecretEnv) String() string { return strings.Join(s.patterns, ",") }

// Allows reports whether a row may read the variable name: it matches a pattern
// and is not ReservedEnv. Names are compared exactly (the environment is
// case-sensitive).
func (s SecretEnv) Allows(name string) bool {
	if name == "" || ReservedEnv(name) {
		return false
	}
	for _, p := range s.patterns {
		switch {
		case p == "*":
			return true
		case strings.HasPrefix(p, "*"):
			if strings.HasSuffix(name, p[1:]) {
				return true
			}
		case strings.HasSuffix(p, "*"):
			if strings.HasPrefix(name, p[:len(p)-1]) {
				return true
			}
		case p == name:
			return true
		}
	}
	return false
}

// Guard is env as rows see it: a variable s does not allow resolves to nothing, and
// ApplyAuth fails on it with ERR:auth:env_not_allowed:<NAME> instead of applying no
// credential, so the refusal is not mistaken for an unset variable. Give the guarded
// Env to every runner and to the breaker's credential tag.
func (s SecretEnv) Guard(env Env) Env {
	if env == nil {
		env = MapEnv(nil)
	}
	return func(name string) (string, bool) {
		if !s.Allows(name) {
			return envRefused, false
		}
		return env(name)
	}
}

// envRefused is the value a guarded Env answers, with ok false, for a name outside
// its list: ApplyAuth recognises it. It holds a NUL byte, which no environment
// value can, and an unguarded Env never answers it.
const envRefused = "\x00capdir:env_not_allowed"

// reservedEnv are the variables the capdir process reads for itself (beyond
// CAPDIR_*): the Go runtime's, the HTTP client's proxy and TLS settings (a proxy URL
// may carry a password), and the process's own paths and zone.
var reservedEnv = map[string]bool{
	"GODEBUG": true, "GOGC": true, "GOMAXPROCS": true, "GOMEMLIMIT": true, "GOTRACEBACK": true,
	"HTTP_PROXY": true, "HTTPS_PROXY": true, "NO_PROXY": true, "ALL_PROXY": true, "REQUEST_METHOD": true,
	"SSL_CERT_FILE": true, "SSL_CERT_DIR": true,
	"HOME": true, "PATH": true, "TMPDIR": true, "TZ": true, "ZONEINFO": true,
}

// ReservedEnv reports whether name is one of capdir's own variables, which no row
// may read whatever the allow-list says: CAPDIR_* (the owner key among them) and
// the variables the process itself reads (GODEBUG, GOGC, GOMAXPROCS, GOMEMLIMIT,
// GOTRACEBACK, HTTP_PROXY, HTTPS_PROXY, NO_PROXY, ALL_PROXY, REQUEST_METHOD,
// SSL_CERT_FILE, SSL_CERT_DIR, HOME, PATH, TMPDIR, TZ, ZONEINFO). Case is ignored,
// so capdir_terminal_key and http_proxy are reserved too.
func ReservedEnv(name string) bool {
	up := strings.ToUpper(name)
	return strings.HasPrefix(up, "CAPDIR_") || reservedEnv[up]
}

// AuthVariables lists the environment variables an auth spec reads, in the order
// ApplyAuth reads them (each $NAME of a headers spec, once per use). It parses the
// spec exactly as ApplyAuth does, and fails as ApplyAuth would on a malformed spec.
func AuthVariables(spec string) ([]string, error) {
	var req OutboundRequest
	cred, err := ApplyAuth(spec, MapEnv(nil), &req)
	if err != nil {
		return nil, err
	}
	return cred.Names, nil
}
