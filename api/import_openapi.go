package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/capdir/capdir/api/importer/openapi"
	"github.com/capdir/capdir/command"
)

// Import formats: the ?format= of POST /api/directory/import.
const (
	FormatRows    = "rows"    // a JSON array or NDJSON of row objects (the default)
	FormatOpenAPI = "openapi" // an OpenAPI 3.0 or 3.1 document, JSON or YAML
)

// importFormat reads ?format=.
func importFormat(r *http.Request) (string, error) {
	switch f := r.URL.Query().Get("format"); f {
	case "", FormatRows:
		return FormatRows, nil
	case FormatOpenAPI, FormatD1, FormatSQLite:
		return f, nil
	default:
		return "", fmt.Errorf("%w: format must be rows (the default), openapi, d1 or sqlite; got %q", ErrBadQuery, f)
	}
}

// importOpenAPI is POST /api/directory/import?format=openapi: the body is an
// OpenAPI document (at most openapi.MaxSpecBytes), each of whose operations
// becomes an http row (see command.Directory.ImportOpenAPI).
// The query holds the options: prefix, server, category, auth_env (repeatable:
// NAME for every security scheme, or SCHEME=NAME), auth_origin (repeatable: an
// origin trusted with the credential besides the spec's server's, or a plain-http
// one), base (the URL the spec was read from, for relative server URLs), prune and
// dry_run (true or 1).
// A spec refused whole is 400 (413 over a limit) and writes nothing, as is one
// whose rows would send a credential off its server's origin; otherwise the
// answer, 200, reports every operation and where the credentials go.
func (s *Server) importOpenAPI(w http.ResponseWriter, r *http.Request) error {
	opt, in, err := openAPIQuery(r.URL.Query())
	if err != nil {
		return err
	}
	release, err := s.admitImport()
	if err != nil {
		return err
	}
	defer release()
	data, err := readBody(w, r, openapi.MaxSpecBytes, "the spec")
	if err != nil {
		return err
	}
	report, err := s.dir.ImportOpenAPI(r.Context(), data, opt, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, report)
	return nil
}

// openAPIQuery reads the options of an OpenAPI import from its query.
func openAPIQuery(q url.Values) (openapi.Options, command.ItemsImport, error) {
	opt := openapi.Options{Prefix: q.Get("prefix"), Server: q.Get("server"), Category: q.Get("category"), Base: q.Get("base"),
		AuthOrigins: q["auth_origin"]}
	for _, v := range q["auth_env"] {
		if opt.AuthEnv == nil {
			opt.AuthEnv = map[string]string{}
		}
		scheme, env, named := strings.Cut(v, "=")
		if !named {
			scheme, env = "", v
		}
		opt.AuthEnv[scheme] = env
	}
	var in command.ItemsImport
	var err error
	if in.Prune, err = queryFlag(q, "prune"); err != nil {
		return opt, in, err
	}
	if in.DryRun, err = queryFlag(q, "dry_run"); err != nil {
		return opt, in, err
	}
	return opt, in, opt.Validate()
}

// queryFlag reads a boolean query parameter: absent, true/1 or false/0.
func queryFlag(q url.Values, name string) (bool, error) {
	switch v := q.Get(name); v {
	case "", "false", "0":
		return false, nil
	case "true", "1":
		return true, nil
	default:
		return false, fmt.Errorf("%w: %s must be true or false; got %q", ErrBadQuery, name, v)
	}
}
