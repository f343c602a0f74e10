package agentrunner

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// AnyModel is the provider prefix that matches every model id, with the lowest
// precedence: the provider of a deployment that has one.
const AnyModel = "*"

// Provider is one entry of the provider table: model ids starting with Prefix are
// sent to BaseURL.
type Provider struct {
	// Prefix is matched against the start of the model id; AnyModel matches all.
	// A prefix ending in ':' is a routing prefix, removed from the model id sent.
	Prefix string
	// BaseURL is the OpenAI-compatible API root, without a trailing '/': requests
	// go to BaseURL + "/chat/completions".
	BaseURL string
}

// Providers is the provider table: which OpenAI-compatible server each model id
// goes to. The zero value routes nothing. It is immutable and safe for concurrent
// use.
type Providers struct {
	list []Provider // longest prefix first; AnyModel last
}

// ParseProviders builds the provider table. Each argument may hold several entries
// separated by commas (as a repeated --agent-provider flag and
// CAPDIR_AGENT_PROVIDERS give them); blanks are skipped. An entry is
// PREFIX=BASE_URL: PREFIX is a non-empty start of a model id without spaces, '='
// or ',' ("gpt-", "gw:", "openai/"), or * for any model; BASE_URL is an http or
// https URL with a host and no user info, query or fragment
// ("https://api.openai.com/v1"). A prefix given twice is an error. Errors wrap
// ErrBadProvider and name the entry.
func ParseProviders(args []string) (Providers, error) {
	var ps Providers
	seen := map[string]bool{}
	for _, arg := range args {
		for _, entry := range strings.Split(arg, ",") {
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue
			}
			p, err := parseProvider(entry)
			if err != nil {
				return Providers{}, err
			}
			if seen[p.Prefix] {
				return Providers{}, fmt.Errorf("%w: %q: the prefix %q is given twice", ErrBadProvider, entry, p.Prefix)
			}
			seen[p.Prefix] = true
			ps.list = append(ps.list, p)
		}
	}
	sort.SliceStable(ps.list, func(i, j int) bool { return rank(ps.list[i].Prefix) > rank(ps.list[j].Prefix) })
	return ps, nil
}

// rank orders prefixes for matching: longer first, AnyModel after every other.
func rank(prefix string) int {
	if prefix == AnyModel {
		return -1
	}
	return len(prefix)
}

func parseProvider(entry string) (Provider, error) {
	prefix, base, ok := strings.Cut(entry, "=")
	prefix, base = strings.TrimSpace(prefix), strings.TrimSpace(base)
	if !ok || prefix == "" || base == "" {
		return Provider{}, fmt.Errorf("%w: %q: want PREFIX=BASE_URL, e.g. gw:=https://gateway.example/v1 or *=https://api.openai.com/v1", ErrBadProvider, entry)
	}
	if strings.ContainsAny(prefix, " \t\r\n") {
		return Provider{}, fmt.Errorf("%w: %q: the prefix must not contain spaces", ErrBadProvider, entry)
	}
	if prefix != AnyModel && strings.Contains(prefix, "*") {
		return Provider{}, fmt.Errorf("%w: %q: a prefix is matched as it is written, without wildcards; * alone matches every model", ErrBadProvider, entry)
	}
	u, err := url.Parse(base)
	switch {
	case err != nil:
		return Provider{}, fmt.Errorf("%w: %q: the base URL does not parse: %v", ErrBadProvider, entry, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return Provider{}, fmt.Errorf("%w: %q: the base URL must start with http:// or https://", ErrBadProvider, entry)
	case u.Host == "":
		return Provider{}, fmt.Errorf("%w: %q: the base URL has no host", ErrBadProvider, entry)
	case u.User != nil:
		return Provider{}, fmt.Errorf("%w: %q: the base URL must not carry user info; put the credential in the agent row's auth column", ErrBadProvider, entry)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return Provider{}, fmt.Errorf("%w: %q: the base URL must not have a query or fragment", ErrBadProvider, entry)
	}
	return Provider{Prefix: prefix, BaseURL: strings.TrimRight(base, "/")}, nil
}

// Route returns where model goes: the base URL of the longest prefix matching it
// (AnyModel last), and the model id to send, which is model without the prefix when
// the prefix ends in ':', model unchanged otherwise. ok is false when no prefix
// matches.
func (ps Providers) Route(model string) (baseURL, sent string, ok bool) {
	for _, p := range ps.list {
		if p.Prefix == AnyModel {
			return p.BaseURL, model, true
		}
		if strings.HasPrefix(model, p.Prefix) {
			if strings.HasSuffix(p.Prefix, ":") {
				model = model[len(p.Prefix):]
			}
			return p.BaseURL, model, true
		}
	}
	return "", "", false
}

// List returns the entries, in matching order.
func (ps Providers) List() []Provider { return append([]Provider(nil), ps.list...) }

// String is the table as ParseProviders reads it back: entries in matching order,
// joined with commas.
func (ps Providers) String() string {
	parts := make([]string, len(ps.list))
	for i, p := range ps.list {
		parts[i] = p.Prefix + "=" + p.BaseURL
	}
	return strings.Join(parts, ",")
}
