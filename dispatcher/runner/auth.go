package runner

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Env looks up an environment variable; in production os.LookupEnv behind the
// operator's allow-list (SecretEnv.Guard). The dispatcher never reads the process
// environment itself.
type Env func(name string) (string, bool)

// MapEnv is an Env backed by a map, for tests and embedding.
func MapEnv(m map[string]string) Env {
	return func(name string) (string, bool) {
		v, ok := m[name]
		return v, ok
	}
}

// Credential reports what ApplyAuth did. It holds the applied secret values only so
// that callers can scrub them (Secrets) and detect rotation (Tag); it never
// serialises them.
type Credential struct {
	// Form is the auth prefix that was read ("bearer", "headers", ...), "" for none.
	Form string
	// Names lists the environment variables the spec names, in spec order.
	Names []string
	// Missing lists the named variables that were absent or empty.
	Missing []string

	values []string // raw values applied, in order
	forms  []string // every string a value can appear as on the wire
}

// Applied reports whether any secret value was put on the request.
func (c Credential) Applied() bool { return len(c.values) > 0 }

// Secrets returns every string a caller must scrub from output: the applied values,
// their wire encodings (base64 for basic), each also URL query- and path-escaped
// (as an upstream gives them back in a URL or a redirect's Location), and the
// escaped forms an upstream's JSON echo gives all of these, longest first.
func (c Credential) Secrets() []string {
	out := make([]string, 0, len(c.forms))
	seen := make(map[string]bool, len(c.forms))
	for _, s := range c.forms {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// String never shows a value.
func (c Credential) String() string {
	return "Credential{" + c.Form + " " + strings.Join(c.Names, ",") + "}"
}

// Tag is a 16-bit HMAC-SHA256 tag (4 hex characters) of the applied values, keyed
// with salt; "" when nothing was applied. Two calls with the same credential give
// the same tag, a rotated credential almost surely a different one, and 16 bits are
// far too few to recover or confirm a value.
func (c Credential) Tag(salt string) string {
	if !c.Applied() {
		return ""
	}
	m := hmac.New(sha256.New, []byte(salt))
	for _, v := range c.values {
		m.Write([]byte(v))
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil)[:2])
}

func (c *Credential) use(name string, env Env) (string, bool, error) {
	c.Names = append(c.Names, name)
	v, ok, err := lookup(name, env)
	if err != nil || !ok {
		c.Missing = append(c.Missing, name)
		return "", false, err
	}
	c.values = append(c.values, v)
	c.forms = appendForms(c.forms, v)
	return v, true, nil
}

// minDerived is the shortest form whose derived forms (appendDerivedForms) are
// looked for, and the shortest derived form kept: a shorter one would match too
// much of an answer by chance.
const minDerived = 8

// appendDerivedForms appends the forms of v (a value, or a form it is sent in)
// that a debugging upstream's echo of a request may give it in besides
// appendForms': base64 (standard and URL
// alphabets, where v sits at any of the three byte offsets of a longer encoded
// text, as in an echoed header encoded whole: the characters v alone decides),
// every character \u-escaped (lower- and upper-case hex), and v in lower and in
// upper case. None for a v shorter than minDerived.
func appendDerivedForms(forms []string, v string) []string {
	if len(v) < minDerived {
		return forms
	}
	for k := 0; k < 3; k++ {
		b := append(make([]byte, k, k+len(v)), v...)
		n := len(b)
		first, end := (8*k+5)/6, (8*n)/6 // the characters holding bits of v alone
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			if f := enc.EncodeToString(b)[first:end]; len(f) >= minDerived {
				forms = append(forms, f)
			}
		}
	}
	if lower, upper, ok := uEscaped(v); ok {
		forms = append(forms, lower, upper)
	}
	for _, f := range []string{strings.ToLower(v), strings.ToUpper(v)} {
		if f != v {
			forms = append(forms, f)
		}
	}
	return forms
}

// lookup reads name from env: ok is false for a missing or empty variable, and the
// error ERR:auth:env_not_allowed:<name> when env is a SecretEnv guard refusing it.
func lookup(name string, env Env) (string, bool, error) {
	v, ok := env(name)
	switch {
	case !ok && v == envRefused:
		return "", false, errEnvNotAllowed(name)
	case !ok || v == "":
		return "", false, nil
	}
	return v, true, nil
}

// uEscaped is v with every character written as a JSON \u escape, in lower- and
// in upper-case hex; ok is false when v holds a character outside the Basic
// Multilingual Plane (a pair of escapes, not looked for).
func uEscaped(v string) (lower, upper string, ok bool) {
	const lo, up = "0123456789abcdef", "0123456789ABCDEF"
	l := make([]byte, 0, 6*len(v))
	u := make([]byte, 0, 6*len(v))
	for _, r := range v {
		if r > 0xffff {
			return "", "", false
		}
		l = append(l, '\\', 'u', lo[r>>12], lo[r>>8&15], lo[r>>4&15], lo[r&15])
		u = append(u, '\\', 'u', up[r>>12], up[r>>8&15], up[r>>4&15], up[r&15])
	}
	return string(l), string(u), true
}

// appendForms appends v's forms (makeForms), made once for each value: a
// row's credential is the same value call after call. At most maxCachedForms
// values' forms are kept (then the cache starts again), in this process's
// memory alone, as the environment holds the values themselves.
func appendForms(forms []string, v string) []string {
	if f, ok := cachedForms.m.Load(v); ok {
		return append(forms, f.([]string)...)
	}
	f := makeForms(v)
	if cachedForms.n.Add(1) > maxCachedForms {
		cachedForms.m.Clear()
		cachedForms.n.Store(1)
	}
	cachedForms.m.Store(v, f)
	return append(forms, f...)
}

var cachedForms struct {
	m sync.Map // value → its forms, never changed once stored
	n atomic.Int64
}

const maxCachedForms = 1024

// makeForms is v and the forms an upstream may give it back in: URL query-
// and path-escaped (an echoed URL, or a redirect's Location, which a refusal
// quotes), and each of these inside a JSON string (appendJSONForms) and in the
// forms an echo encodes it in (appendDerivedForms): what goes on the wire is the
// escaped form (a query parameter's) or an encoding of v (basic's base64, given
// here as v), and an echo encodes what it got.
func makeForms(v string) []string {
	var forms []string
	q, p := url.QueryEscape(v), url.PathEscape(v)
	for i, f := range []string{v, q, p} {
		if i > 0 && f == v || i == 2 && f == q {
			continue
		}
		forms = append(forms, f)
		forms = appendJSONForms(forms, f)
		forms = appendDerivedForms(forms, f)
	}
	return forms
}

// appendJSONForms appends the forms v takes inside a JSON string, as encoding/json
// writes it with and without HTML escaping, where they differ from v: an upstream
// that echoes a header in JSON writes a value holding '"' or '&' that way.
func appendJSONForms(forms []string, v string) []string {
	html, _ := json.Marshal(v)
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	for _, q := range []string{string(html), strings.TrimSuffix(plain.String(), "\n")} {
		if f := q[1 : len(q)-1]; f != v {
			forms = append(forms, f)
		}
	}
	return forms
}

// ApplyAuth reads the row's auth column and adds the credential to req:
//
//	""                        nothing
//	headers:{"k":"$ENV"}      each header with $NAME replaced from env; a header whose
//	                          variable is missing is omitted
//	bearer:ENV                Authorization: Bearer <value>
//	basic:ENV                 Authorization: Basic base64(<value>:)
//	query:param=ENV           appends param=<url-encoded value> to the URL query
//	oauth:ENV                 ENV holds an OAuth 2.0 access token; sent as Bearer
//
// A variable that is absent or empty applies no credential and is not an error: the
// upstream's 401 is the first signal. A variable env refuses (a SecretEnv guard)
// fails with ERR:auth:env_not_allowed:<NAME> before anything is applied. Any other
// prefix fails with
// ERR:auth:unknown_prefix:<prefix>; a malformed known form with
// ERR:auth:bad_spec:<prefix>:<reason>. Prefixes match case-insensitively.
func ApplyAuth(spec string, env Env, req *OutboundRequest) (Credential, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return Credential{}, nil
	}
	if env == nil {
		env = MapEnv(nil)
	}
	prefix, rest, _ := strings.Cut(spec, ":")
	rest = strings.TrimSpace(rest)
	form := strings.ToLower(strings.TrimSpace(prefix))
	cred := Credential{Form: form}
	switch form {
	case "bearer", "oauth":
		name, err := envName(prefix, rest)
		if err != nil {
			return Credential{}, err
		}
		v, ok, err := cred.use(name, env)
		if err != nil {
			return Credential{}, err
		}
		if ok {
			req.SetHeader("Authorization", "Bearer "+v)
		}
	case "basic":
		name, err := envName(prefix, rest)
		if err != nil {
			return Credential{}, err
		}
		v, ok, err := cred.use(name, env)
		if err != nil {
			return Credential{}, err
		}
		if ok {
			enc := base64.StdEncoding.EncodeToString([]byte(v + ":"))
			cred.forms = appendForms(cred.forms, enc)
			req.SetHeader("Authorization", "Basic "+enc)
		}
	case "query":
		param, nameSpec, ok := strings.Cut(rest, "=")
		param = strings.TrimSpace(param)
		if !ok || param == "" {
			return Credential{}, errAuthBadSpec(prefix, "want param=ENV")
		}
		name, err := envName(prefix, nameSpec)
		if err != nil {
			return Credential{}, err
		}
		v, ok, err := cred.use(name, env)
		if err != nil {
			return Credential{}, err
		}
		if ok {
			req.URL = appendQuery(req.URL, url.QueryEscape(param)+"="+url.QueryEscape(v))
		}
	case "headers":
		if err := applyHeaders(prefix, rest, env, req, &cred); err != nil {
			return Credential{}, err
		}
	default:
		return Credential{}, errAuthUnknownPrefix(prefix)
	}
	return cred, nil
}

// envName validates the variable part of a spec; a leading "$" is tolerated.
func envName(prefix, s string) (string, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "$")
	if s == "" {
		return "", errAuthBadSpec(prefix, "missing variable name")
	}
	return s, nil
}

func applyHeaders(prefix, rest string, env Env, req *OutboundRequest, cred *Credential) error {
	var hs map[string]any
	if err := json.Unmarshal([]byte(rest), &hs); err != nil {
		return errAuthBadSpec(prefix, err.Error())
	}
	names := make([]string, 0, len(hs))
	for k := range hs {
		names = append(names, k)
	}
	sort.Strings(names) // deterministic Names order
	for _, h := range names {
		tmpl, ok := hs[h].(string)
		if !ok {
			return errAuthBadSpec(prefix, "header "+h+" is not a string")
		}
		v, ok, err := expandEnv(tmpl, env, cred)
		if err != nil {
			return err
		}
		if ok {
			req.SetHeader(h, v)
		}
	}
	return nil
}

// expandEnv replaces every $NAME in tmpl from env. ok is false when any named
// variable is missing, in which case the header is omitted and none of its values
// count as applied; a variable env refuses is an error.
func expandEnv(tmpl string, env Env, cred *Credential) (string, bool, error) {
	var b strings.Builder
	var used []string
	ok := true
	for i := 0; i < len(tmpl); {
		if tmpl[i] != '$' || i+1 >= len(tmpl) || !isNameStart(tmpl[i+1]) {
			b.WriteByte(tmpl[i])
			i++
			continue
		}
		j := i + 1
		for j < len(tmpl) && isNameByte(tmpl[j]) {
			j++
		}
		name := tmpl[i+1 : j]
		cred.Names = append(cred.Names, name)
		v, found, err := lookup(name, env)
		if err != nil {
			return "", false, err
		}
		if !found {
			cred.Missing = append(cred.Missing, name)
			ok = false
		}
		used = append(used, v)
		b.WriteString(v)
		i = j
	}
	if !ok {
		return "", false, nil
	}
	cred.values = append(cred.values, used...)
	for _, v := range used {
		cred.forms = appendForms(cred.forms, v)
	}
	return b.String(), true, nil
}

// appendQuery adds kv to the query of rawURL, before any fragment.
func appendQuery(rawURL, kv string) string {
	base, frag, hasFrag := strings.Cut(rawURL, "#")
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
		if strings.HasSuffix(base, "?") || strings.HasSuffix(base, "&") {
			sep = ""
		}
	}
	out := base + sep + kv
	if hasFrag {
		out += "#" + frag
	}
	return out
}

// CredentialTag is the tag of the credential an auth spec resolves to now ("" when
// none applies or the spec is malformed).
func CredentialTag(spec string, env Env, salt string) string {
	if strings.TrimSpace(spec) == "" {
		return ""
	}
	var req OutboundRequest
	cred, err := ApplyAuth(spec, env, &req)
	if err != nil {
		return ""
	}
	return cred.Tag(salt)
}
