package openapi

import (
	"errors"
	"fmt"
	"strings"
)

// Limits of one spec. A spec over either is refused whole, before anything of it
// is written.
const (
	// MaxSpecBytes caps the spec's size, JSON or YAML. The parser reads a spec
	// through a YAML node tree, which allocates a few hundred times the document's
	// size: the cap keeps one import within about a gigabyte.
	MaxSpecBytes = 4 << 20
	// MaxOperations caps how many operations one spec may have.
	MaxOperations = 10000
)

// Errors of a spec refused whole; nothing of it is written.
var (
	// ErrSpec: the input is not an OpenAPI 3.0 or 3.1 document capdir can read.
	ErrSpec = errors.New("openapi_spec_refused")
	// ErrTooLarge: the spec is over MaxSpecBytes or MaxOperations.
	ErrTooLarge = errors.New("openapi_spec_too_large")
	// ErrOptions: an import option is malformed.
	ErrOptions = errors.New("openapi_bad_option")
	// ErrCredentialOrigin: a row of the import would send its credential to an
	// origin other than the spec's server's (an operation's or path's own servers
	// override the spec's), or over plain http to a host that is not loopback,
	// and the operator did not name that origin (Options.AuthOrigins).
	ErrCredentialOrigin = errors.New("openapi_credential_origin")
)

func specErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s; nothing was imported", ErrSpec, fmt.Sprintf(format, args...))
}

func optionErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrOptions, fmt.Sprintf(format, args...))
}

func tooLarge(format string, args ...any) error {
	return fmt.Errorf("%w: %s; nothing was imported", ErrTooLarge, fmt.Sprintf(format, args...))
}

// tooManyOperations is ErrTooLarge for a spec of n operations.
func tooManyOperations(n int) error {
	return tooLarge("the spec has %d operations; the limit is %d (split it, or import a part of it)", n, MaxOperations)
}

// The reasons an operation is refused, each produced here only.

func refuseRequiredIn(in, name string) string {
	return fmt.Sprintf("required %s parameter %q cannot be expressed: an http row sends no per-call %ss", in, name, in)
}

func refuseComplexParam(in, name, typ string) string {
	return fmt.Sprintf("required %s parameter %q is of type %s, which a URL slot cannot carry", in, name, typ)
}

func refuseBodyType(types []string) string {
	return fmt.Sprintf("the request body is required and has no JSON media type (it has %v); an http row sends a JSON or text body", types)
}

func refuseArgCollision(name string) string {
	return fmt.Sprintf("two arguments are named %q (a path and a query parameter, or a parameter named like the request body's argument)", name)
}

func refuseNoCredential(scheme, typ string) string {
	return fmt.Sprintf("it needs the credential of security scheme %q (%s); name the environment variable that holds it with --auth-env NAME (or --auth-env %s=NAME; auth_env= on the HTTP route)", scheme, typ, scheme)
}

func refuseSecurity(reasons []string) string {
	return fmt.Sprintf("no security requirement can be expressed as a row credential: %v", reasons)
}

func refuseKey(key string, err error) string {
	return fmt.Sprintf("key %q: %v; set the operation's operationId, or a shorter --prefix", key, err)
}

func refuseDuplicateKey(key, other string) string {
	return fmt.Sprintf("key %s is already the key of %s; give one of them another operationId", key, other)
}

func refuseSchema(what string, err error) string {
	return fmt.Sprintf("the input schema built from %s: %v", what, err)
}

func refuseServer(url string, why string) string {
	return fmt.Sprintf("server URL %q: %s; give the server with --spec-server URL (server= on the HTTP route)", url, why)
}

func refusePath(path string) string {
	return fmt.Sprintf("path %q has a '$', whitespace or an unclosed '{', which a target cannot carry", path)
}

func refusePathStart(path string) string {
	return fmt.Sprintf("path %q does not begin with '/', so it would run on into the server's host or port; an OpenAPI path begins with '/'", path)
}

func refuseRef(ref, why string) string {
	return fmt.Sprintf("schema $ref %q: %s", ref, why)
}

// maxOpsShown caps the operations a refusal names per origin.
const maxOpsShown = 5

// refuseCredentialOrigin is ErrCredentialOrigin: the operations whose rows would
// send the credential off the main server's origin (off), or over plain http to
// a host that is not loopback (plain), each by origin, and how to import them.
func refuseCredentialOrigin(server, main string, off, plain []originOps) error {
	var why []string
	if len(off) > 0 {
		why = append(why, fmt.Sprintf("the credential of --auth-env would be sent to %s, not to the origin of the spec's server %s "+
			"(those operations' or their paths' own servers override the spec's)", listOrigins(off), main))
	}
	if len(plain) > 0 {
		hosts := "a host that is not loopback"
		if len(plain) > 1 {
			hosts = "hosts that are not loopback"
		}
		why = append(why, fmt.Sprintf("the credential of --auth-env would be sent over plain http to %s, %s, "+
			"where anyone on the network path can read it", listOrigins(plain), hosts))
	}
	var fix []string
	if len(off) > 0 && len(plain) == 0 {
		fix = append(fix, fmt.Sprintf("to send every operation to the spec's server, give --spec-server %s (server= on the HTTP route)", server))
	}
	if len(off) > 0 {
		fix = append(fix, "to give those operations a credential of their own, import them from a spec of their own with that credential")
	}
	if len(plain) > 0 {
		fix = append(fix, "to send the credential over https, give --spec-server https://… (server= on the HTTP route)")
	}
	var origins []string
	for _, g := range append(append([]originOps{}, off...), plain...) {
		origins = append(origins, "--auth-origin "+g.origin)
	}
	fix = append(fix, fmt.Sprintf("to trust an origin with this credential, name it: %s (auth_origin= on the HTTP route)", strings.Join(origins, " ")))
	return fmt.Errorf("%w: %s; nothing was imported; %s", ErrCredentialOrigin, strings.Join(why, "; and "), strings.Join(fix, "; "))
}

// listOrigins is "ORIGIN (OP, OP) and ORIGIN (OP…)", at most maxOpsShown
// operations named per origin.
func listOrigins(groups []originOps) string {
	parts := make([]string, 0, len(groups))
	for _, g := range groups {
		ops := g.ops
		more := ""
		if len(ops) > maxOpsShown {
			ops, more = ops[:maxOpsShown], fmt.Sprintf(" and %d more", len(g.ops)-maxOpsShown)
		}
		parts = append(parts, fmt.Sprintf("%s (%s%s)", g.origin, strings.Join(ops, ", "), more))
	}
	if len(parts) > 1 {
		return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
	return parts[0]
}
