package openapi_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/capdir/capdir/api/importer"
	"github.com/capdir/capdir/api/importer/openapi"
	"github.com/capdir/capdir/contract"
)

// spec is a minimal 3.0 document with paths and components spliced in.
func spec(paths, components string) string {
	return `{"openapi":"3.0.3","info":{"title":"T","version":"1"},"servers":[{"url":"https://api.example.com"}],"paths":{` +
		paths + `},"components":{` + components + `}}`
}

func convert(t *testing.T, doc string, opt openapi.Options) openapi.Spec {
	t.Helper()
	s, err := openapi.Convert(context.Background(), []byte(doc), opt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConvertRefCycle: a schema that is only a $ref to itself, and two that
// refer to each other, end in a refusal or a finite schema, never a hang.
func TestConvertRefCycle(t *testing.T) {
	for name, comps := range map[string]string{
		"self":     `"schemas":{"A":{"$ref":"#/components/schemas/A"}}`,
		"mutual":   `"schemas":{"A":{"$ref":"#/components/schemas/B"},"B":{"$ref":"#/components/schemas/A"}}`,
		"property": `"schemas":{"A":{"type":"object","properties":{"next":{"$ref":"#/components/schemas/A"}}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			doc := spec(`"/a":{"post":{"operationId":"makeA","requestBody":{"required":true,"content":{"application/json":{"schema":{"$ref":"#/components/schemas/A"}}}},"responses":{"200":{"description":"ok"}}}}`, comps)
			s, err := openapi.Convert(context.Background(), []byte(doc), openapi.Options{})
			if err != nil {
				if !errors.Is(err, openapi.ErrSpec) {
					t.Fatalf("not ErrSpec: %v", err)
				}
				return
			}
			it := s.Items[0]
			if it.Row == nil && it.Refused == "" {
				t.Fatalf("neither a row nor a refusal: %+v", it)
			}
			if name != "property" && !strings.Contains(it.Refused, "it is a cycle of $refs that never reaches a schema") {
				t.Fatalf("a cycle of refs: %+v", it)
			}
			if name == "property" && (it.Row == nil || !strings.Contains(it.Row.InputSchema, `"next":{"$ref":"#/$defs/A"}`)) {
				t.Fatalf("a recursive schema: %+v", it)
			}
		})
	}
}

const okResponse = `"responses":{"200":{"description":"ok"}}`

// TestConvertRefusals: each operation the row format cannot express is refused
// with its reason, and the others of the spec still convert.
func TestConvertRefusals(t *testing.T) {
	long := strings.Repeat("a", 130)
	paths := `"/ok":{"get":{"operationId":"fine",` + okResponse + `}},` +
		`"/h":{"get":{"operationId":"needsHeader","parameters":[{"name":"X-Tenant","in":"header","required":true,"schema":{"type":"string"}}],` + okResponse + `}},` +
		`"/c":{"get":{"operationId":"needsCookie","parameters":[{"name":"sid","in":"cookie","required":true,"schema":{"type":"string"}}],` + okResponse + `}},` +
		`"/q":{"get":{"operationId":"arrayQuery","parameters":[{"name":"ids","in":"query","required":true,"schema":{"type":"array","items":{"type":"integer"}}}],` + okResponse + `}},` +
		`"/l":{"get":{"operationId":"` + long + `",` + okResponse + `}},` +
		`"/d1":{"get":{"operationId":"list_pets",` + okResponse + `}},` +
		`"/d2":{"get":{"operationId":"listPets",` + okResponse + `}},` +
		`"/re":{"get":{"operationId":"badPattern","parameters":[{"name":"p","in":"query","schema":{"type":"string","pattern":"(?<=a)b"}}],` + okResponse + `}},` +
		`"/f":{"post":{"operationId":"upload","requestBody":{"required":true,"content":{"multipart/form-data":{"schema":{"type":"object"}}}},` + okResponse + `}},` +
		`"/m":{"get":{"operationId":"mtls","security":[{"cert":[]}],` + okResponse + `}},` +
		`"/x":{"get":{"operationId":"missingScheme","security":[{"nope":[]}],` + okResponse + `}},` +
		`"/both":{"get":{"operationId":"twoAtOnce","security":[{"cert":[],"key":[]}],` + okResponse + `}},` +
		`"/u/{id}":{"get":{"operationId":"列出","parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}}],` + okResponse + `}}`
	comps := `"securitySchemes":{"cert":{"type":"mutualTLS"},"key":{"type":"apiKey","in":"query","name":"k"}}`
	s := convert(t, spec(paths, comps), openapi.Options{AuthEnv: map[string]string{"": "T_API_KEY"}})
	want := map[string]string{
		"GET /ok":     "",
		"GET /h":      `required header parameter "X-Tenant" cannot be expressed: an http row sends no per-call headers`,
		"GET /c":      `required cookie parameter "sid" cannot be expressed`,
		"GET /q":      `required query parameter "ids" is of type array, which a URL slot cannot carry`,
		"GET /l":      `must be 1 to 128 characters`,
		"GET /d1":     "",
		"GET /d2":     "key LIST_PETS is already the key of GET /d1; give one of them another operationId",
		"GET /re":     "is not valid regex",
		"POST /f":     "the request body is required and has no JSON media type (it has [multipart/form-data])",
		"GET /m":      `security scheme "cert" (mutualTLS) has no row credential form`,
		"GET /x":      `security scheme "nope" is not defined under components.securitySchemes`,
		"GET /both":   `needs several credentials at once`,
		"GET /u/{id}": "",
	}
	if len(s.Items) != len(want) {
		t.Fatalf("%d items, want %d", len(s.Items), len(want))
	}
	for _, it := range s.Items {
		if it.Source == "GET /u/{id}" && it.Key != "GET_U_ID" {
			t.Errorf("an operationId with no key character: key %q, want GET_U_ID", it.Key)
		}
		w, ok := want[it.Source]
		switch {
		case !ok:
			t.Errorf("unexpected item %s", it.Source)
		case w == "" && it.Row == nil:
			t.Errorf("%s refused: %s", it.Source, it.Refused)
		case w != "" && (it.Row != nil || !strings.Contains(it.Refused, w)):
			t.Errorf("%s: refused %q, want it to say %q", it.Source, it.Refused, w)
		}
	}
}

// TestConvertSpecRefused: input that is no spec capdir can read is refused whole.
func TestConvertSpecRefused(t *testing.T) {
	var many strings.Builder
	many.WriteString(`{"openapi":"3.0.0","info":{"title":"many","version":"1"},"servers":[{"url":"https://x.example"}],"paths":{`)
	for i := range 100000 {
		if i > 0 {
			many.WriteByte(',')
		}
		fmt.Fprintf(&many, `"/p%d":{"get":{"responses":{}}}`, i)
	}
	many.WriteString(`}}`)
	var manyYAML strings.Builder
	manyYAML.WriteString("openapi: 3.1.0\ninfo: {title: many, version: '1'}\npaths:\n")
	for i := range 20000 {
		fmt.Fprintf(&manyYAML, "  /p%d:\n    get:\n      responses: {}\n", i)
	}
	var flowYAML strings.Builder // method lines with their value: not counted before loading
	flowYAML.WriteString("openapi: 3.1.0\ninfo: {title: many, version: '1'}\nservers: [{url: 'https://x.example'}]\npaths:\n")
	for i := range openapi.MaxOperations + 1 {
		fmt.Fprintf(&flowYAML, "  /p%d:\n    get: {responses: {}}\n", i)
	}
	bomb := "openapi: 3.0.0\ninfo: {title: bomb, version: '1'}\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 1; i < 10; i++ {
		bomb += fmt.Sprintf("a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	bomb += "paths: {/a: {get: {responses: {}, x-bomb: *a9}}}\n"
	for _, tc := range []struct {
		name, doc string
		opt       openapi.Options
		is        error
		says      string
	}{
		{"empty", "  \n", openapi.Options{}, openapi.ErrSpec, "the body is empty"},
		{"garbage", "\x00\x01\xff not a spec {{{", openapi.Options{}, openapi.ErrSpec, "cannot be read as an OpenAPI document"},
		{"alias bomb", bomb, openapi.Options{}, openapi.ErrSpec, "excessive aliasing"},
		{"deeply nested", strings.Repeat("[", 1<<20), openapi.Options{}, openapi.ErrSpec, "exceeded max depth"},
		{"swagger 2", `{"swagger":"2.0","info":{"title":"x","version":"1"},"paths":{}}`, openapi.Options{}, openapi.ErrSpec, "capdir imports OpenAPI 3.0 and 3.1"},
		{"no paths", `{"openapi":"3.1.0","info":{"title":"x","version":"1"}}`, openapi.Options{}, openapi.ErrSpec, "it has no paths"},
		{"relative server", `{"openapi":"3.0.0","info":{"title":"x","version":"1"},"servers":[{"url":"/v1"}],"paths":{"/a":{"get":{"responses":{}}}}}`, openapi.Options{}, openapi.ErrSpec, `server URL "/v1": it is not an absolute http or https URL`},
		{"server variable", `{"openapi":"3.0.0","info":{"title":"x","version":"1"},"servers":[{"url":"https://{region}.x.example"}],"paths":{"/a":{"get":{"responses":{}}}}}`, openapi.Options{}, openapi.ErrSpec, "it has a variable without a default"},
		{"external ref", `{"openapi":"3.0.0","info":{"title":"x","version":"1"},"servers":[{"url":"https://x.example"}],"paths":{"/a":{"$ref":"other.yaml#/a"}}}`, openapi.Options{}, openapi.ErrSpec, "cannot be read"},
		{"too large", strings.Repeat(" ", openapi.MaxSpecBytes+1), openapi.Options{}, openapi.ErrTooLarge, "the limit is 4194304"},
		{"100k operations", many.String(), openapi.Options{}, openapi.ErrTooLarge, "the spec has 100000 operations; the limit is 10000"},
		{"20k operations, YAML", manyYAML.String(), openapi.Options{}, openapi.ErrTooLarge, "the spec has 20000 operations"},
		{"10001 operations, YAML flow style", flowYAML.String(), openapi.Options{}, openapi.ErrTooLarge, "the spec has 10001 operations; the limit is 10000"},
		{"bad auth env", spec(`"/a":{"get":{"responses":{}}}`, ""), openapi.Options{AuthEnv: map[string]string{"": "NOT-A-NAME"}}, openapi.ErrOptions, "is not an environment variable name"},
		{"bad server", spec(`"/a":{"get":{"responses":{}}}`, ""), openapi.Options{Server: "ftp://x"}, openapi.ErrOptions, "not an absolute http or https URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := openapi.Convert(context.Background(), []byte(tc.doc), tc.opt)
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v, want %v saying %q", err, tc.is, tc.says)
			}
		})
	}
}

// TestConvertPathKeepsTheServersOrigin: a path that does not begin with '/' would
// run on into the server's host or port and send the row's credential to an
// origin the spec chooses, --spec-server or not; it is refused, and every row
// made keeps the server's origin.
func TestConvertPathKeepsTheServersOrigin(t *testing.T) {
	refused := []string{"@evil.example/steal", ".evil.example/x", ":8443/x", "x", "%40evil.example/x", "?q=1", "#f"}
	kept := []string{"/ok", "//evil.example/x", "/@evil.example", "/a:b@c"}
	var paths []string
	for i, p := range append(append([]string{}, refused...), kept...) {
		paths = append(paths, fmt.Sprintf(`%q:{"get":{"operationId":"op%d","security":[{"k":[]}],%s}}`, p, i, okResponse))
	}
	doc := spec(strings.Join(paths, ","), `"securitySchemes":{"k":{"type":"apiKey","in":"header","name":"X-Key"}}`)
	for _, opt := range []openapi.Options{{}, {Server: "https://api.example.com"}} {
		opt.AuthEnv = map[string]string{"": "T_KEY"}
		s := convert(t, doc, opt)
		if len(s.Items) != len(refused)+len(kept) {
			t.Fatalf("%d items, want %d", len(s.Items), len(refused)+len(kept))
		}
		for _, it := range s.Items {
			path := strings.TrimPrefix(it.Source, "GET ")
			if slices.Contains(refused, path) {
				if it.Row != nil || !strings.Contains(it.Refused, "does not begin with '/'") {
					t.Errorf("path %q: %+v, want it refused", path, it)
				}
				continue
			}
			if it.Row == nil {
				t.Fatalf("path %q refused: %s", path, it.Refused)
			}
			_, u := contract.CutHTTPTarget(it.Row.Target)
			if origin, err := contract.TemplateOrigin(u); err != nil || origin != "https://api.example.com" {
				t.Errorf("path %q: target %s has origin %q (%v)", path, it.Row.Target, origin, err)
			}
		}
	}
}

// TestConvertBaseDropsItsCredential: a relative server URL resolves against the
// URL the spec was read from without that URL's user info, query or fragment,
// which may hold the credential that read the spec.
func TestConvertBaseDropsItsCredential(t *testing.T) {
	doc := strings.Replace(spec(`"/a":{"get":{"operationId":"op",`+okResponse+`}}`, ""), `"https://api.example.com"`, `"/v1"`, 1)
	for _, base := range []string{
		"https://reader:s3cret@specs.example.com/api/spec.yaml",
		"https://specs.example.com/api/spec.yaml?token=s3cret",
		"https://specs.example.com/api/spec.yaml?#s3cret",
	} {
		s := convert(t, doc, openapi.Options{Base: base})
		if it := s.Items[0]; it.Row == nil || it.Row.Target != "GET https://specs.example.com/v1/a" {
			t.Errorf("base %s: %+v, want target GET https://specs.example.com/v1/a", base, it)
		}
	}
}

// TestConvertNamesStayOnTheirLine: a parameter name with a line break cannot
// write a docstring line of its own, such as a SOURCE line claiming the row for
// another import (whose prune would then delete it), and a path cannot hold one.
func TestConvertNamesStayOnTheirLine(t *testing.T) {
	forged := `\n# SOURCE: openapi spec=\"Victim\" prefix=\"\" op=GET /v\u2028# SOURCE: openapi spec=\"Victim\" prefix=\"\" op=GET /w`
	doc := spec(`"/a/{x`+forged+`}":{"get":{"operationId":"inPath",`+okResponse+`}},`+
		`"/b":{"get":{"operationId":"inQuery","parameters":[{"name":"q`+forged+`","in":"query","schema":{"type":"string"}}],`+okResponse+`}}`, "")
	s := convert(t, doc, openapi.Options{Prefix: "b_"})
	for _, it := range s.Items {
		if strings.HasPrefix(it.Source, "GET /a/") { // a path is a URL's: no whitespace, in its names neither
			if it.Row != nil || !strings.Contains(it.Refused, "has a '$', whitespace or an unclosed '{'") {
				t.Errorf("%s: %+v, want it refused", it.Source, it)
			}
			continue
		}
		if it.Row == nil {
			t.Fatalf("%s refused: %s", it.Source, it.Refused)
		}
		if src, _ := importer.SourceOf(it.Row.Content); src != s.Source || strings.Count(it.Row.Content, "\n# SOURCE: ") != 1 {
			t.Errorf("%s: the row names source %q, want %q:\n%s", it.Source, src, s.Source, it.Row.Content)
		}
	}
}

// credentialSpec is a spec whose top-level server is main, every operation
// needing a bearer token, with paths spliced in.
func credentialSpec(main, paths string) string {
	return `{"openapi":"3.0.3","info":{"title":"T","version":"1"},"servers":[{"url":"` + main + `"}],` +
		`"components":{"securitySchemes":{"bearer":{"type":"http","scheme":"bearer"}}},"security":[{"bearer":[]}],"paths":{` + paths + `}}`
}

// TestConvertCredentialStaysOnTheServersOrigin: with a credential, an operation
// or path whose own servers name another origin than the spec's server (which
// they override), or a plain-http server on a host that is not loopback, refuses
// the whole import, naming the operations, their origin and the spec's, unless
// the operator names that origin; servers of the same origin, an operation
// without security, and an import without a credential convert as they did.
func TestConvertCredentialStaysOnTheServersOrigin(t *testing.T) {
	const main = "https://api.good.example"
	opServer := `"/a":{"get":{"operationId":"a","servers":[{"url":"http://127.0.0.1:18282/steal"}],` + okResponse + `}},` +
		`"/b":{"get":{"operationId":"b",` + okResponse + `}}`
	pathServer := `"/a":{"servers":[{"url":"http://127.0.0.1:18282/steal"}],"get":{"operationId":"a",` + okResponse + `}},` +
		`"/b":{"get":{"operationId":"b",` + okResponse + `}}`
	sameOrigin := `"/a":{"get":{"operationId":"a","servers":[{"url":"https://API.good.example:443/v2"}],` + okResponse + `}},` +
		`"/b":{"servers":[{"url":"https://api.good.example/v3"}],"get":{"operationId":"b",` + okResponse + `}}`
	noSecurity := `"/a":{"get":{"operationId":"a","security":[],"servers":[{"url":"http://127.0.0.1:18282/steal"}],` + okResponse + `}},` +
		`"/b":{"get":{"operationId":"b",` + okResponse + `}}`
	withKey := openapi.Options{AuthEnv: map[string]string{"": "DEMO_API_KEY"}}
	for _, tc := range []struct {
		name, doc string
		opt       openapi.Options
		refused   []string          // what the refusal says; nil: converted
		targets   map[string]string // key → target
		auths     map[string]string // key → auth
		origins   map[string]openapi.Credential
	}{
		{name: "operation servers, another origin", doc: credentialSpec(main, opServer), opt: withKey, refused: []string{
			"openapi_credential_origin: the credential of --auth-env would be sent to http://127.0.0.1:18282 (GET /a), not to the origin of the spec's server https://api.good.example",
			"(those operations' or their paths' own servers override the spec's); nothing was imported",
			"give --spec-server https://api.good.example", "import them from a spec of their own", "--auth-origin http://127.0.0.1:18282 (auth_origin= on the HTTP route)"}},
		{name: "path servers, another origin", doc: credentialSpec(main, pathServer), opt: withKey, refused: []string{
			"would be sent to http://127.0.0.1:18282 (GET /a), not to the origin of the spec's server https://api.good.example"}},
		{name: "another scheme", doc: credentialSpec(main, strings.ReplaceAll(opServer, "http://127.0.0.1:18282/steal", "http://api.good.example")), opt: withKey,
			refused: []string{"would be sent to http://api.good.example (GET /a), not to the origin of the spec's server https://api.good.example"}},
		{name: "another port", doc: credentialSpec(main, strings.ReplaceAll(opServer, "http://127.0.0.1:18282/steal", "https://api.good.example:8443")), opt: withKey,
			refused: []string{"would be sent to https://api.good.example:8443 (GET /a)"}},
		{name: "the origin named", doc: credentialSpec(main, opServer), opt: openapi.Options{AuthEnv: withKey.AuthEnv, AuthOrigins: []string{"http://127.0.0.1:18282/"}},
			targets: map[string]string{"A": "GET http://127.0.0.1:18282/steal/a", "B": "GET https://api.good.example/b"},
			auths:   map[string]string{"A": "bearer:DEMO_API_KEY", "B": "bearer:DEMO_API_KEY"},
			origins: map[string]openapi.Credential{"A": {Origin: "http://127.0.0.1:18282", Env: "DEMO_API_KEY"}, "B": {Origin: main, Env: "DEMO_API_KEY"}}},
		{name: "the same origin, other base paths", doc: credentialSpec(main, sameOrigin), opt: withKey,
			targets: map[string]string{"A": "GET https://API.good.example:443/v2/a", "B": "GET https://api.good.example/v3/b"},
			auths:   map[string]string{"A": "bearer:DEMO_API_KEY", "B": "bearer:DEMO_API_KEY"},
			origins: map[string]openapi.Credential{"A": {Origin: main, Env: "DEMO_API_KEY"}, "B": {Origin: main, Env: "DEMO_API_KEY"}}},
		{name: "no security on the operation", doc: credentialSpec(main, noSecurity), opt: withKey,
			targets: map[string]string{"A": "GET http://127.0.0.1:18282/steal/a", "B": "GET https://api.good.example/b"},
			auths:   map[string]string{"A": "", "B": "bearer:DEMO_API_KEY"},
			origins: map[string]openapi.Credential{"B": {Origin: main, Env: "DEMO_API_KEY"}}},
		{name: "no credential", doc: strings.Replace(credentialSpec(main, opServer), `"security":[{"bearer":[]}]`, `"security":[{"bearer":[]},{}]`, 1),
			targets: map[string]string{"A": "GET http://127.0.0.1:18282/steal/a", "B": "GET https://api.good.example/b"},
			auths:   map[string]string{"A": "", "B": ""}, origins: map[string]openapi.Credential{}},
		{name: "--spec-server replaces every server", doc: credentialSpec(main, opServer), opt: openapi.Options{AuthEnv: withKey.AuthEnv, Server: "https://api.good.example/v1"},
			targets: map[string]string{"A": "GET https://api.good.example/v1/a", "B": "GET https://api.good.example/v1/b"},
			auths:   map[string]string{"A": "bearer:DEMO_API_KEY", "B": "bearer:DEMO_API_KEY"},
			origins: map[string]openapi.Credential{"A": {Origin: main, Env: "DEMO_API_KEY"}, "B": {Origin: main, Env: "DEMO_API_KEY"}}},
		{name: "plain http, not loopback", doc: credentialSpec("http://api.plain.example/v1", `"/b":{"get":{"operationId":"b",`+okResponse+`}}`), opt: withKey, refused: []string{
			"openapi_credential_origin: the credential of --auth-env would be sent over plain http to http://api.plain.example (GET /b), a host that is not loopback",
			"give --spec-server https://… (server= on the HTTP route)", "--auth-origin http://api.plain.example (auth_origin= on the HTTP route)"}},
		{name: "plain http as --spec-server", doc: credentialSpec(main, opServer), opt: openapi.Options{AuthEnv: withKey.AuthEnv, Server: "http://10.0.0.7:8080"},
			refused: []string{"would be sent over plain http to http://10.0.0.7:8080 (GET /a, GET /b), a host that is not loopback"}},
		{name: "plain http, named", doc: credentialSpec("http://api.plain.example/v1", `"/b":{"get":{"operationId":"b",`+okResponse+`}}`),
			opt:     openapi.Options{AuthEnv: withKey.AuthEnv, AuthOrigins: []string{"http://API.plain.example:80"}},
			targets: map[string]string{"B": "GET http://api.plain.example/v1/b"}, auths: map[string]string{"B": "bearer:DEMO_API_KEY"},
			origins: map[string]openapi.Credential{"B": {Origin: "http://api.plain.example", Env: "DEMO_API_KEY"}}},
		{name: "plain http, loopback", doc: credentialSpec("http://localhost:8081", `"/b":{"get":{"operationId":"b",`+okResponse+`}}`), opt: withKey,
			targets: map[string]string{"B": "GET http://localhost:8081/b"}, auths: map[string]string{"B": "bearer:DEMO_API_KEY"},
			origins: map[string]openapi.Credential{"B": {Origin: "http://localhost:8081", Env: "DEMO_API_KEY"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := openapi.Convert(context.Background(), []byte(tc.doc), tc.opt)
			if tc.refused != nil {
				if !errors.Is(err, openapi.ErrCredentialOrigin) {
					t.Fatalf("got %v (%d items), want ErrCredentialOrigin", err, len(s.Items))
				}
				for _, w := range tc.refused {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("the refusal does not say %q:\n%v", w, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range s.Items {
				if it.Row == nil {
					t.Fatalf("%s refused: %s", it.Source, it.Refused)
				}
				if it.Row.Target != tc.targets[it.Key] || it.Row.Auth != tc.auths[it.Key] {
					t.Errorf("%s: target %q auth %q, want %q %q", it.Key, it.Row.Target, it.Row.Auth, tc.targets[it.Key], tc.auths[it.Key])
				}
			}
			if len(s.Items) != len(tc.targets) || fmt.Sprint(s.Credentials) != fmt.Sprint(tc.origins) {
				t.Errorf("%d items; credentials %v, want %v", len(s.Items), s.Credentials, tc.origins)
			}
		})
	}
}

// TestConvertAuthOriginOption: an auth origin is scheme://host[:port] of http or
// https, nothing more.
func TestConvertAuthOriginOption(t *testing.T) {
	for _, bad := range []string{"api.example.com", "ftp://api.example.com", "https://api.example.com/v1", "https://u:p@api.example.com", "https://api.example.com?x=1", "https://"} {
		err := openapi.Options{AuthOrigins: []string{bad}}.Validate()
		if !errors.Is(err, openapi.ErrOptions) || !strings.Contains(err.Error(), "auth-origin") {
			t.Errorf("%q: %v, want ErrOptions", bad, err)
		}
	}
	for _, good := range []string{"https://api.example.com", "http://127.0.0.1:18282/", "https://[::1]:8443"} {
		if err := (openapi.Options{AuthOrigins: []string{good}}).Validate(); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
}
