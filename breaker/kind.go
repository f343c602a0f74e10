package breaker

import "fmt"

// Kind is what a call's outcome means to the breaker.
type Kind int

const (
	// NotCounted is an outcome that says nothing about the credential: the call was
	// cancelled, timed out, or was refused before it reached the upstream. It is
	// neither a strike nor a reset. It is the zero Kind.
	NotCounted Kind = iota
	// AuthFailure is an upstream 401 or 403: one strike.
	AuthFailure
	// UpstreamOther is any other upstream response (200, 404, 500, ...): it ends the
	// run of strikes.
	UpstreamOther
)

// Classify maps a call's outcome to a Kind. reachedUpstream is false when the call
// was cancelled, timed out or was refused before an upstream response arrived; the
// status is then ignored. A status outside 100..599 is not an HTTP response and is
// NotCounted too.
func Classify(upstreamStatus int, reachedUpstream bool) Kind {
	switch {
	case !reachedUpstream, upstreamStatus < 100, upstreamStatus > 599:
		return NotCounted
	case upstreamStatus == 401, upstreamStatus == 403:
		return AuthFailure
	default:
		return UpstreamOther
	}
}

var kindNames = [...]string{
	NotCounted:    "not_counted",
	AuthFailure:   "auth_failure",
	UpstreamOther: "upstream_other",
}

// String returns the stable name used in JSON: not_counted, auth_failure or
// upstream_other.
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// MarshalText encodes k by its stable name, so logged observations do not depend on
// the order of the constants.
func (k Kind) MarshalText() ([]byte, error) {
	if k < 0 || int(k) >= len(kindNames) {
		return nil, fmt.Errorf("breaker: unknown kind %d", int(k))
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText decodes a name written by MarshalText.
func (k *Kind) UnmarshalText(b []byte) error {
	kind, ok := KindNamed(string(b))
	if !ok {
		return fmt.Errorf("breaker: unknown kind %q", b)
	}
	*k = kind
	return nil
}

// KindNamed is the kind whose name (MarshalText's) is name, if any.
func KindNamed(name string) (Kind, bool) {
	for i, n := range kindNames {
		if name == n {
			return Kind(i), true
		}
	}
	return 0, false
}
