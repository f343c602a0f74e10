package openapi

import (
	"errors"
	"fmt"
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
