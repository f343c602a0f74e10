package main

import (
	"github.com/capdir/capdir/internal/upstreamtest"
	"net/http"
	"os"
	"strings"
	"testing"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../../testdata/openapi/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestImportCommandOpenAPI: capdir import --openapi from a URL whose spec has a
// relative server (resolved against the URL), a dry run that prints the rows and
// writes nothing, the import, and a re-import that changes nothing.
func TestImportCommandOpenAPI(t *testing.T) {
	n, flags := testServer(t)
	spec := strings.Replace(string(readFixture(t, "petstore-3.0.yaml")), "http://petstore.swagger.io/v1", "/v1", 1)
	site := upstreamtest.Start(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/specs/petstore.yaml" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(spec))
	})
	url := site.URL + "/specs/petstore.yaml"

	stdout, stderr, err := runCLI(t, "", append([]string{"import", "--openapi", url, "--dry-run", "--prefix", "pet_"}, flags...)...)
	if err != nil || stderr != "" || strings.Count(stdout, "\n") != 4 ||
		!strings.Contains(stdout, `"target":"GET `+site.URL+`/v1/pets?limit=$1"`) ||
		!strings.HasSuffix(stdout, "dry run, nothing written: 3 operations of \"Swagger Petstore\" 1.0.0: 3 created, 0 updated, 0 unchanged, 0 refused, 0 failed; 0 no longer in the spec\n") {
		t.Fatalf("dry run: %v\n%s\n%s", err, stdout, stderr)
	}
	if rows := listRows(t, n); len(rows) != 0 {
		t.Fatalf("a dry run wrote %d rows", len(rows))
	}
	stdout, _, err = runCLI(t, "", append([]string{"import", "--openapi", url, "--prefix", "pet_"}, flags...)...)
	if err != nil || stdout != "imported 3 operations of \"Swagger Petstore\" 1.0.0: 3 created, 0 updated, 0 unchanged, 0 refused, 0 failed; 0 no longer in the spec\n" {
		t.Fatalf("import: %v %s", err, stdout)
	}
	file := writeFile(t, "petstore.yaml", []byte(spec))
	stdout, _, err = runCLI(t, "", append([]string{"import", "--openapi", file, "--prefix", "pet_", "--spec-server", site.URL + "/v1"}, flags...)...)
	if err != nil || !strings.Contains(stdout, "0 created, 0 updated, 3 unchanged") {
		t.Fatalf("re-import: %v %s", err, stdout)
	}
	// A file's relative server has nothing to resolve against.
	_, _, err = runCLI(t, "", append([]string{"import", "--openapi", file}, flags...)...)
	if err == nil || !strings.Contains(err.Error(), `server URL "/v1": it is not an absolute http or https URL`) {
		t.Fatalf("relative server from a file: %v", err)
	}
}

// TestImportCommandOpenAPIReports: operations refused and notes go to stderr.
func TestImportCommandOpenAPIReports(t *testing.T) {
	_, flags := testServer(t)
	file := writeFile(t, "petstore.json", readFixture(t, "petstore-3.1.json"))
	stdout, stderr, err := runCLI(t, "", append([]string{"import", "--openapi", file, "--auth-env", "PET_TOKEN", "--auth-env", "apiKey=PET_API_KEY"}, flags...)...)
	if err != nil || !strings.Contains(stdout, "4 created, 0 updated, 0 unchanged, 1 refused, 0 failed") {
		t.Fatalf("import: %v %s %s", err, stdout, stderr)
	}
	for _, want := range []string{
		`GET /pets LIST_PETS: note: optional header parameter "X-Request-Id" is not sent`,
		`PUT /pets/{petId}/photo UPLOAD_PET_PHOTO: refused: the request body is required and has no JSON media type (it has [image/png])`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	for _, args := range [][]string{{"import"}, {"import", "rows.json", "--openapi", file}} {
		if _, _, err := runCLI(t, "", append(args, flags...)...); err == nil || !strings.Contains(err.Error(), "name one thing to import") {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// TestImportCommandWrongKey: --openapi, --d1 and --sqlite with a key the server
// refuses say so, and write nothing.
func TestImportCommandWrongKey(t *testing.T) {
	n, _ := testServer(t)
	keyFile := writeFile(t, "wrong.key", []byte("not-the-owner-key-0123456789\n"))
	flags := []string{"--server", n.URL(), "--key-file", keyFile}
	spec := writeFile(t, "petstore.yaml", readFixture(t, "petstore-3.0.yaml"))
	d1 := writeFile(t, "d1.json", []byte(`[{"results":[{"key":"A","type":"fn","target":"now"}],"success":true}]`))
	for _, args := range [][]string{{"--openapi", spec}, {"--d1", d1}} {
		_, _, err := runCLI(t, "", append(append([]string{"import"}, args...), flags...)...)
		if err == nil || !strings.Contains(err.Error(), "HTTP 401: unauthorized") {
			t.Errorf("%v: %v", args, err)
		}
	}
	if rows := listRows(t, n); len(rows) != 0 {
		t.Fatalf("%d rows written with a wrong key", len(rows))
	}
}

// TestImportCommandOpenAPISpecURLCredential: a spec read from a URL that carries
// its reader's credential (user info, a query token) is read with it, and no
// row's target carries it.
func TestImportCommandOpenAPISpecURLCredential(t *testing.T) {
	_, flags := testServer(t)
	spec := strings.Replace(string(readFixture(t, "petstore-3.0.yaml")), "http://petstore.swagger.io/v1", "/v1", 1)
	site := upstreamtest.Start(t, func(w http.ResponseWriter, r *http.Request) {
		if user, pass, _ := r.BasicAuth(); user != "reader" || pass != "s3cret" || r.URL.Query().Get("token") != "t0ken" {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		w.Write([]byte(spec))
	})
	url := strings.Replace(site.URL, "http://", "http://reader:s3cret@", 1) + "/specs/petstore.yaml?token=t0ken"
	stdout, stderr, err := runCLI(t, "", append([]string{"import", "--openapi", url, "--dry-run"}, flags...)...)
	if err != nil || !strings.Contains(stdout, `"target":"GET `+site.URL+`/v1/pets?limit=$1"`) ||
		strings.Contains(stdout+stderr, "s3cret") || strings.Contains(stdout+stderr, "t0ken") {
		t.Fatalf("dry run: %v\n%s\n%s", err, stdout, stderr)
	}
}

// TestImportCommandOpenAPICredentialOrigin: capdir import --openapi --auth-env
// refuses a spec whose operation's servers would take the credential to another
// origin than the spec's server, saying how to import it, writes nothing, and with
// --auth-origin naming that origin imports it, printing where the credential goes.
func TestImportCommandOpenAPICredentialOrigin(t *testing.T) {
	n, flags := testServer(t)
	spec := "openapi: 3.0.3\ninfo: {title: origins, version: '1'}\nservers: [{url: 'https://api.good.example'}]\n" +
		"components: {securitySchemes: {bearer: {type: http, scheme: bearer}}}\nsecurity: [{bearer: []}]\npaths:\n" +
		"  /a: {get: {operationId: a, servers: [{url: 'http://127.0.0.1:18282/steal'}], responses: {'200': {description: ok}}}}\n" +
		"  /b: {get: {operationId: b, responses: {'200': {description: ok}}}}\n"
	file := writeFile(t, "origins.yaml", []byte(spec))
	for _, dry := range [][]string{nil, {"--dry-run"}} {
		_, _, err := runCLI(t, "", append(append([]string{"import", "--openapi", file, "--auth-env", "DEMO_API_KEY"}, dry...), flags...)...)
		if err == nil || !strings.Contains(err.Error(), "HTTP 400") ||
			!strings.Contains(err.Error(), "openapi_credential_origin: the credential of --auth-env would be sent to http://127.0.0.1:18282 (GET /a), not to the origin of the spec's server https://api.good.example") ||
			!strings.Contains(err.Error(), "--auth-origin http://127.0.0.1:18282") {
			t.Fatalf("%v: %v", dry, err)
		}
	}
	if rows := listRows(t, n); len(rows) != 0 {
		t.Fatalf("a refused import wrote %d rows", len(rows))
	}
	stdout, _, err := runCLI(t, "", append([]string{"import", "--openapi", file, "--auth-env", "DEMO_API_KEY", "--auth-origin", "http://127.0.0.1:18282"}, flags...)...)
	if err != nil || !strings.HasPrefix(stdout, "credentials sent to http://127.0.0.1:18282: DEMO_API_KEY (1 row)\ncredentials sent to https://api.good.example: DEMO_API_KEY (1 row)\nimported 2 operations") {
		t.Fatalf("with --auth-origin: %v\n%s", err, stdout)
	}
}
