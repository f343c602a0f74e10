package runner

import (
	"sort"
	"strings"
)

// Redacted replaces every secret RedactDeep finds.
const Redacted = "REDACTED"

// credentialHeaders are removed from any map, whatever their case.
var credentialHeaders = map[string]bool{
	"authorization":       true,
	"proxy-authorization": true,
	"x-api-key":           true,
	"cookie":              true,
	"set-cookie":          true,
}

// RedactDeep returns a copy of v with credential material removed; v is not
// modified. It walks map[string]any, map[string]string, map[string][]string, []any
// and []string (what encoding/json produces, plus header maps) and:
//
//   - drops keys named authorization, proxy-authorization, x-api-key, cookie or
//     set-cookie (any case), and keys shaped like *_API_KEY, *_TOKEN or *_SECRET
//     (any case, "-" counted as "_");
//   - replaces every occurrence of each non-empty secret inside any string (a URL
//     query included) with REDACTED;
//   - replaces a whole string that contains an environment-style assignment
//     NAME_API_KEY=..., NAME_TOKEN=... or NAME_SECRET=... (NAME upper case) with
//     REDACTED.
//
// Other values are returned as they are.
func RedactDeep(v any, secrets []string) any {
	return NewRedactor(secrets).Value(v)
}

// Redactor replaces a fixed set of secret values; the zero Redactor replaces none.
type Redactor struct {
	r  *strings.Replacer
	ss []string // the values, longest first
}

// NewRedactor returns a Redactor of the non-empty secrets.
func NewRedactor(secrets []string) Redactor {
	ss := make([]string, 0, len(secrets))
	for _, s := range secrets {
		if s != "" {
			ss = append(ss, s)
		}
	}
	if len(ss) == 0 {
		return Redactor{}
	}
	// Longest first, so a secret containing another is replaced whole.
	sort.SliceStable(ss, func(i, j int) bool { return len(ss[i]) > len(ss[j]) })
	pairs := make([]string, 0, 2*len(ss))
	for _, s := range ss {
		pairs = append(pairs, s, Redacted)
	}
	return Redactor{r: strings.NewReplacer(pairs...), ss: ss}
}

// Scrub replaces secret values inside s; it does not apply the assignment rule,
// so it is safe for upstream bodies returned to the caller. A string holding
// none is returned as it is, found so by a search for each value, which is
// faster than the replacer's walk over many values.
func (rd Redactor) Scrub(s string) string {
	for _, v := range rd.ss {
		if strings.Contains(s, v) {
			return rd.r.Replace(s)
		}
	}
	return s
}

func (rd Redactor) str(s string) string {
	if looksLikeSecretAssignment(s) {
		return Redacted
	}
	return rd.Scrub(s)
}

// Value is RedactDeep with rd's secrets.
func (rd Redactor) Value(v any) any {
	switch t := v.(type) {
	case string:
		return rd.str(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if !isCredentialKey(k) {
				out[k] = rd.Value(e)
			}
		}
		return out
	case map[string]string:
		out := make(map[string]string, len(t))
		for k, e := range t {
			if !isCredentialKey(k) {
				out[k] = rd.str(e)
			}
		}
		return out
	case map[string][]string:
		out := make(map[string][]string, len(t))
		for k, e := range t {
			if !isCredentialKey(k) {
				out[k] = rd.strs(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = rd.Value(e)
		}
		return out
	case []string:
		return rd.strs(t)
	default:
		return v
	}
}

func (rd Redactor) strs(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = rd.str(s)
	}
	return out
}

var secretSuffixes = []string{"_API_KEY", "_TOKEN", "_SECRET"}

// isCredentialKey reports whether a map key names credential material.
func isCredentialKey(k string) bool {
	lk := strings.ToLower(k)
	if credentialHeaders[lk] {
		return true
	}
	uk := strings.ReplaceAll(strings.ToUpper(k), "-", "_")
	for _, suf := range secretSuffixes {
		if len(uk) > len(suf) && strings.HasSuffix(uk, suf) {
			return true
		}
	}
	return false
}

// looksLikeSecretAssignment reports whether s contains an environment-style
// assignment NAME_API_KEY=<value> (or _TOKEN / _SECRET): NAME is upper case
// letters, digits and underscores, the value non-empty. Lower-case names such as a
// URL's page_token=... are left alone.
func looksLikeSecretAssignment(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '=' || i+1 >= len(s) || s[i+1] == ' ' || s[i+1] == '\n' {
			continue
		}
		// Walk back over the name.
		j := i
		for j > 0 && isAssignNameByte(s[j-1]) {
			j--
		}
		name := s[j:i]
		for _, suf := range secretSuffixes {
			if len(name) > len(suf) && strings.HasSuffix(name, suf) {
				return true
			}
		}
	}
	return false
}

func isAssignNameByte(c byte) bool {
	return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
}
