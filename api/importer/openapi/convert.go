package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/capdir/capdir/api/importer"
	"github.com/getkin/kin-openapi/openapi3"
)

// Options are the operator's choices for one import; the zero value takes the
// spec as it is.
type Options struct {
	// Prefix is put in front of every key (upper-cased).
	Prefix string
	// Server replaces the spec's servers: the base URL of every target.
	Server string
	// Category is every row's category; empty takes the operation's first tag.
	Category string
	// AuthEnv names the environment variable holding each security scheme's
	// credential, by scheme name; the name "" applies to every scheme not named.
	AuthEnv map[string]string
	// Base is where the spec was read from (a URL), against which relative server
	// URLs resolve, without its user info, query and fragment (SpecBase); empty
	// when it was a file or a request body.
	Base string
	// AuthOrigins are origins (scheme://host[:port]) the operator trusts with the
	// credentials AuthEnv names besides the main server's (Server, else the spec's
	// first server), and plain-http origins on a host that is not loopback that
	// may receive them, the main server's included. A row with a credential for
	// any other origin refuses the whole import (ErrCredentialOrigin).
	AuthOrigins []string
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate checks the options' syntax.
func (o Options) Validate() error {
	for scheme, env := range o.AuthEnv {
		if !envName.MatchString(env) {
			return optionErr("auth-env %q for scheme %q is not an environment variable name (letters, digits and '_', not starting with a digit)", env, scheme)
		}
	}
	if o.Server != "" {
		if _, why := absoluteServer(o.Server); why != "" {
			return optionErr("server %q: %s", o.Server, why)
		}
	}
	for _, origin := range o.AuthOrigins {
		if why := validOrigin(origin); why != "" {
			return optionErr("auth-origin %q: %s; an origin is scheme://host[:port], as https://api.example.com", origin, why)
		}
	}
	return nil
}

// Spec is a converted spec: its title and version and one Item per operation, in
// path order then method order.
type Spec struct {
	Title   string
	Version string
	// Source names this import in the rows' SOURCE line: the spec's title and the
	// key prefix. A later import of the same spec and prefix updates and prunes
	// exactly these rows.
	Source string
	Items  []importer.Item
	// Credentials are where the rows with a credential send it, by key.
	Credentials map[string]Credential
}

// Convert reads an OpenAPI 3.0 or 3.1 document (JSON or YAML) and turns each of its
// operations into an http row, or a refusal that says why it cannot be one. Only
// local $refs are resolved: a spec that refers to another file or URL is refused.
// A spec over MaxSpecBytes or MaxOperations is refused whole (ErrTooLarge), as is
// one that is not an OpenAPI 3 document (ErrSpec). A spec whose rows would send
// a credential to an origin other than the main server's (an operation's or
// path's own servers), or over plain http to a host that is not loopback, is
// refused whole (ErrCredentialOrigin) unless opt.AuthOrigins names that origin.
func Convert(ctx context.Context, data []byte, opt Options) (Spec, error) {
	if err := opt.Validate(); err != nil {
		return Spec{}, err
	}
	if len(data) > MaxSpecBytes {
		return Spec{}, tooLarge("the spec is %d bytes; the limit is %d", len(data), MaxSpecBytes)
	}
	if n := countOperations(data); n > MaxOperations {
		return Spec{}, tooManyOperations(n)
	}
	doc, err := load(ctx, data)
	if err != nil {
		return Spec{}, err
	}
	ops := operations(doc)
	if len(ops) > MaxOperations { // a YAML spec in flow style ("get: {…}") escapes the count before loading
		return Spec{}, tooManyOperations(len(ops))
	}
	base, err := specServer(doc, opt)
	if err != nil {
		return Spec{}, err
	}
	spec := Spec{Title: doc.Info.Title, Version: doc.Info.Version,
		Source: fmt.Sprintf("openapi spec=%s prefix=%s", strconv.Quote(doc.Info.Title), strconv.Quote(strings.ToUpper(opt.Prefix)))}
	keys := map[string]string{} // key → the operation that has it
	spec.Credentials = map[string]Credential{}
	for _, op := range ops {
		c := &converter{doc: doc, opt: opt, op: op, source: spec.Source, server: base}
		item := c.item()
		if item.Row != nil {
			if other, dup := keys[item.Key]; dup {
				item = importer.Item{Source: item.Source, Key: item.Key, Refused: refuseDuplicateKey(item.Key, other)}
			} else {
				keys[item.Key] = item.Source
				if item.Row.Auth != "" {
					spec.Credentials[item.Key] = Credential{Origin: Origin(c.rowServer), Env: c.env}
				}
			}
		}
		spec.Items = append(spec.Items, item)
	}
	if err := checkCredentialOrigins(base, opt, spec.Credentials, keys); err != nil {
		return Spec{}, err
	}
	return spec, nil
}

// load parses and checks the document. It reads nothing but data.
func load(ctx context.Context, data []byte) (*openapi3.T, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, specErr("the body is empty; send an OpenAPI 3.0 or 3.1 document, JSON or YAML")
	}
	loader := openapi3.NewLoader()
	loader.Context = ctx
	loader.IsExternalRefsAllowed = false
	doc, err := loadSafely(loader, data)
	if err != nil {
		return nil, specErr("it cannot be read as an OpenAPI document: %s", oneLine(err.Error()))
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.0") && !strings.HasPrefix(doc.OpenAPI, "3.1") {
		return nil, specErr("it says openapi %q; capdir imports OpenAPI 3.0 and 3.1 (convert a Swagger 2.0 document first)", doc.OpenAPI)
	}
	if doc.Info == nil || doc.Info.Title == "" {
		return nil, specErr("it has no info.title, which names the import in its rows")
	}
	if doc.Paths == nil || doc.Paths.Len() == 0 {
		return nil, specErr("it has no paths, so no operations to import")
	}
	return doc, nil
}

// loadSafely runs the loader, turning a panic of the parser on hostile input into
// an error.
func loadSafely(loader *openapi3.Loader, data []byte) (doc *openapi3.T, err error) {
	defer func() {
		if p := recover(); p != nil {
			doc, err = nil, fmt.Errorf("the parser failed on it: %v", p)
		}
	}()
	return loader.LoadFromData(data)
}

// countOperations counts the operations under paths before the spec is loaded,
// so that a spec of too many is refused for a fraction of what loading it costs:
// a JSON document by its tokens, streamed; YAML by its lines that are an
// operation's method key ("  get:"), an upper bound. A document it cannot read
// counts what it read so far (the loader then says what is wrong).
func countOperations(data []byte) int {
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
		return countJSONOperations(json.NewDecoder(bytes.NewReader(trimmed)))
	}
	return len(yamlMethodLine.FindAllIndex(data, -1))
}

var yamlMethodLine = regexp.MustCompile(`(?m)^[ \t]+["']?(?i:get|put|post|delete|options|head|patch|trace|query)["']?[ \t]*:[ \t]*$`)

// countJSONOperations counts the method keys two levels under the top-level
// "paths" member.
func countJSONOperations(dec *json.Decoder) int {
	n, depth, inPaths := 0, 0, false
	expectKey := false // the next string at this depth is an object key
	keys := []bool{}   // per open container: is it an object
	for {
		tok, err := dec.Token()
		if err != nil {
			return n
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				keys = append(keys, v == '{')
				depth++
				expectKey = v == '{'
				continue
			default:
				depth--
				keys = keys[:len(keys)-1]
				if depth == 1 {
					inPaths = false
				}
			}
		case string:
			if expectKey {
				if depth == 1 && v == "paths" {
					inPaths = true
				}
				if inPaths && depth == 3 && rank(strings.ToUpper(v)) < len(methodOrder) {
					n++
				}
				expectKey = false
				continue
			}
		}
		// After a value, the next token of an object is a key again.
		expectKey = len(keys) > 0 && keys[len(keys)-1]
	}
}

// op is one operation of the spec.
type op struct {
	method, path string
	item         *openapi3.PathItem
	op           *openapi3.Operation
}

// methodOrder is the order of an operation's methods within one path.
var methodOrder = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "QUERY"}

// operations lists doc's operations, in path order then methodOrder.
func operations(doc *openapi3.T) []op {
	paths := doc.Paths.Map()
	names := make([]string, 0, len(paths))
	for p := range paths {
		names = append(names, p)
	}
	sort.Strings(names)
	var ops []op
	for _, p := range names {
		item := paths[p]
		if item == nil {
			continue
		}
		all := item.Operations()
		methods := make([]string, 0, len(all))
		for m := range all {
			methods = append(methods, strings.ToUpper(m))
		}
		slices.SortFunc(methods, func(a, b string) int { return rank(a) - rank(b) })
		for _, m := range methods {
			if o := all[m]; o != nil {
				ops = append(ops, op{method: m, path: p, item: item, op: o})
			}
		}
	}
	return ops
}

func rank(method string) int {
	if i := slices.Index(methodOrder, method); i >= 0 {
		return i
	}
	return len(methodOrder)
}

// specServer is the base URL of every operation without servers of its own:
// Options.Server, else the spec's first server with its variables at their defaults.
// A relative one resolves against opt.Base; without a base it is an error.
func specServer(doc *openapi3.T, opt Options) (string, error) {
	if opt.Server != "" {
		return strings.TrimRight(opt.Server, "/"), nil
	}
	u, why := serverURL(doc.Servers, opt.Base)
	if why != "" {
		return "", specErr("%s", refuseServer(u, why))
	}
	return u, nil
}

// serverURL is the first of servers as an absolute URL, or the reason it is not
// one. No servers means "/", as the OpenAPI specification says.
func serverURL(servers openapi3.Servers, base string) (string, string) {
	raw := "/"
	var vars openapi3.ServerVariables
	if len(servers) > 0 && servers[0] != nil {
		raw, vars = servers[0].URL, servers[0].Variables
	}
	for name, v := range vars {
		if v != nil {
			raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
		}
	}
	if strings.ContainsAny(raw, "{}") {
		return raw, "it has a variable without a default"
	}
	if base = SpecBase(base); base != "" {
		b, err := url.Parse(base)
		if err == nil {
			if r, err := url.Parse(raw); err == nil {
				raw = b.ResolveReference(r).String()
			}
		}
	}
	u, why := absoluteServer(raw)
	return u, why
}

// SpecBase is the URL a spec was read from as Options.Base takes it: without its
// user info, query and fragment, which may hold the credential that read the spec
// and must not become part of any row's target. A URL that does not parse gives "".
func SpecBase(from string) string {
	u, err := url.Parse(from)
	if err != nil {
		return ""
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// absoluteServer checks that raw is an absolute http(s) URL a target can start
// with (no query, no '$', no whitespace), and returns it without a trailing '/'.
func absoluteServer(raw string) (string, string) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return raw, "it is not a URL: " + err.Error()
	case u.Scheme != "http" && u.Scheme != "https":
		return raw, "it is not an absolute http or https URL (a relative server URL needs the spec's own URL, or --spec-server)"
	case u.Host == "":
		return raw, "it has no host"
	case u.RawQuery != "" || u.Fragment != "":
		return raw, "it has a query or fragment"
	case strings.ContainsAny(raw, "$ \t\r\n"):
		return raw, "it has a '$' or whitespace"
	}
	return strings.TrimRight(raw, "/"), ""
}

// oneLine folds s's whitespace runs into single spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
