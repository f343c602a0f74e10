package api

import (
	"fmt"
	"net/url"

	"github.com/capdir/capdir/contract"
)

// The formats of a document: GET /api/dispatch?key=KEY&format=….
const (
	formatMarkdown = "markdown"
	formatJSON     = "json"
)

// discoveryParams are the query parameters of the discovery forms; each may be
// sent once.
var discoveryParams = []string{"key", "format", "registry", "category", "at"}

// discoveryQueryError is the refusal of a discovery query that cannot be answered,
// saying what to send instead (it matches ErrBadQuery, or is the key's
// *contract.ValidationError: 400 either way); nil when the query is usable.
func discoveryQueryError(q url.Values) error {
	for _, p := range discoveryParams {
		if n := len(q[p]); n > 1 {
			return badDiscovery("%s= appears %d times; send it once", p, n)
		}
	}
	if q.Has("body") || q.Has("shape") {
		return badDiscovery("format= and registry= read, body= and shape= invoke: send one or the other (GET /api/dispatch?key=KEY&body=ARGS invokes KEY)")
	}
	if q.Has("registry") && q.Has("at") {
		return badDiscovery("at= reads one row's document as it stood then: GET /api/dispatch?key=KEY&format=json&at=SEQ (GET /api/directory?at=SEQ lists the directory then)")
	}
	if q.Has("registry") {
		return registryQueryError(q)
	}
	if q.Has("category") {
		return badDiscovery("category= filters the registry: GET /api/dispatch?registry=1&category=CATEGORY")
	}
	if f := q.Get("format"); f != formatMarkdown && f != formatJSON {
		return badDiscovery("format must be markdown or json, got %q", clipParam(f))
	}
	if !q.Has("key") {
		return badDiscovery("format= needs the row's key: GET /api/dispatch?key=KEY&format=markdown")
	}
	return contract.ValidateKey(q.Get("key"))
}

func registryQueryError(q url.Values) error {
	switch {
	case q.Get("registry") != "1":
		return badDiscovery("registry must be 1, got %q: GET /api/dispatch?registry=1 (optionally &category=CATEGORY)", clipParam(q.Get("registry")))
	case q.Has("key"):
		return badDiscovery("registry=1 lists rows and key= reads one: send one or the other")
	case q.Has("format") && q.Get("format") != formatJSON:
		return badDiscovery("the registry is JSON only: leave format= out, or send format=json; format=markdown applies to one row (?key=KEY)")
	}
	return nil
}

func badDiscovery(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadQuery, fmt.Sprintf(format, args...))
}

// clipParam keeps an echoed parameter short.
func clipParam(s string) string { return clip(s, 40) }
