package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/api/importer"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// specFixture reads a spec of testdata/openapi.
func specFixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("../testdata/openapi/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// importSpec posts spec to the OpenAPI import with query q and decodes the answer.
func importSpec(t testing.TB, n *capdir.Node, spec string, q url.Values) importer.SpecReport {
	t.Helper()
	q.Set("format", "openapi")
	status, body := send(t, n, "POST", "/api/directory/import?"+q.Encode(), "application/yaml", spec)
	if status != http.StatusOK {
		t.Fatalf("import: HTTP %d %s", status, body)
	}
	var res importer.SpecReport
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return res
}

func getRow(t testing.TB, n *capdir.Node, key string) contract.Row {
	t.Helper()
	status, body := nodetest.Do(t, n, "GET", "/api/directory/"+key, "")
	if status != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d %s", key, status, body)
	}
	var row contract.Row
	if err := json.Unmarshal([]byte(body), &row); err != nil {
		t.Fatal(err)
	}
	return row
}

// petstore is a local server implementing part of the Petstore spec: GET /v1/pets
// (?limit=), POST /v1/pets (a Pet, stored) and GET /v1/pets/{petId}. It records
// each request's Authorization header.
type petstore struct {
	mu    sync.Mutex
	pets  []map[string]any
	auths []string
}

func (p *petstore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.auths = append(p.auths, r.Header.Get("Authorization"))
	w.Header().Set("content-type", "application/json")
	switch {
	case r.Method == "GET" && r.URL.Path == "/v1/pets":
		pets := p.pets
		if l := r.URL.Query().Get("limit"); l != "" {
			var n int
			fmt.Sscan(l, &n)
			pets = pets[:min(n, len(pets))]
		}
		json.NewEncoder(w).Encode(pets)
	case r.Method == "POST" && r.URL.Path == "/v1/pets":
		var pet map[string]any
		if r.Header.Get("content-type") != "application/json" || json.NewDecoder(r.Body).Decode(&pet) != nil {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"code":400,"message":"a Pet as JSON"}`)
			return
		}
		p.pets = append(p.pets, pet)
		w.WriteHeader(http.StatusCreated)
	case r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/v1/pets/"):
		id := strings.TrimPrefix(r.URL.Path, "/v1/pets/")
		for _, pet := range p.pets {
			if fmt.Sprint(pet["id"]) == id {
				json.NewEncoder(w).Encode(pet)
				return
			}
		}
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"code":404,"message":"no such pet"}`)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func dispatchJSON(t testing.TB, n *capdir.Node, body string) (int, map[string]any) {
	t.Helper()
	status, out := nodetest.Do(t, n, "POST", "/api/dispatch", body)
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return status, m
}

// TestImportOpenAPIPetstore30 imports the OpenAPI Initiative's Petstore (3.0,
// YAML) against a local stand-in, compares rows to the spec field by field, calls
// them through POST /api/dispatch, and re-imports it: nothing is appended.
func TestImportOpenAPIPetstore30(t *testing.T) {
	store := &petstore{}
	upstream := httptest.NewServer(store)
	defer upstream.Close()
	n := nodetest.Start(t, nil)
	spec := specFixture(t, "petstore-3.0.yaml")
	q := url.Values{"server": {upstream.URL + "/v1"}}

	res := importSpec(t, n, spec, q)
	if res.Spec != "Swagger Petstore" || res.Operations != 3 || res.Created != 3 || res.Refused+res.Failed+res.Updated+res.Unchanged != 0 {
		t.Fatalf("import: %+v", res)
	}
	list := getRow(t, n, "LIST_PETS")
	want := contract.Row{Key: "LIST_PETS", Type: "http", Target: "GET " + upstream.URL + "/v1/pets?limit=$1", Category: "pets",
		Content: "# WHAT: List all pets\n# ARGS: $1=limit\n# OUTPUT: A paged array of pets (200, application/json)\n" +
			`# SOURCE: openapi spec="Swagger Petstore" prefix="" op=GET /pets`,
		InputSchema: `{"type":"object","properties":{"limit":{"description":"How many items to return at one time (max 100)","format":"int32","maximum":100,"type":"integer"}}}`,
		Enabled:     1, PlannerVisible: 1, PlannerRank: 100}
	if !sameContract(list, want) {
		t.Fatalf("LIST_PETS:\n got %+v\nwant %+v", list, want)
	}
	create := getRow(t, n, "CREATE_PETS")
	if create.Target != "POST "+upstream.URL+"/v1/pets" || contract.StripDocs(create.Content) != "$1+" ||
		create.InputSchema != `{"type":"object","properties":{"body":{"$ref":"#/$defs/Pet","type":"object"}},"required":["body"],"$defs":{"Pet":{"properties":{"id":{"format":"int64","type":"integer"},"name":{"type":"string"},"tag":{"type":"string"}},"required":["id","name"],"type":"object"}}}` {
		t.Fatalf("CREATE_PETS: %+v", create)
	}
	if show := getRow(t, n, "SHOW_PET_BY_ID"); show.Target != "GET "+upstream.URL+"/v1/pets/$1" || !strings.Contains(show.Content, "# ARGS: $1=petId\n") {
		t.Fatalf("SHOW_PET_BY_ID: %+v", show)
	}

	// The rows run against the stand-in, with named arguments and the pipe form.
	for _, body := range []string{
		`{"key":"CREATE_PETS","body":{"body":{"id":1,"name":"doggie","tag":"a|b"}}}`,
		`{"key":"CREATE_PETS","body":"{\"id\":2,\"name\":\"kitty\"}"}`,
	} {
		if status, out := dispatchJSON(t, n, body); status != http.StatusOK || out["ok"] != true {
			t.Fatalf("%s: HTTP %d %v", body, status, out)
		}
	}
	if status, out := dispatchJSON(t, n, `{"key":"SHOW_PET_BY_ID","body":{"petId":"1"}}`); status != http.StatusOK || !strings.Contains(fmt.Sprint(out["result"]), `"tag":"a|b"`) {
		t.Fatalf("SHOW_PET_BY_ID: HTTP %d %v", status, out)
	}
	if status, out := dispatchJSON(t, n, `{"key":"LIST_PETS","body":{"limit":1}}`); status != http.StatusOK || !strings.Contains(fmt.Sprint(out["result"]), "doggie") || strings.Contains(fmt.Sprint(out["result"]), "kitty") {
		t.Fatalf("LIST_PETS: HTTP %d %v", status, out)
	}
	// The schema from the spec refuses a bad call before the upstream.
	calls := len(store.auths)
	if status, out := dispatchJSON(t, n, `{"key":"CREATE_PETS","body":{"body":{"name":"no id"}}}`); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(out["result"]), "ERR:input:body") {
		t.Fatalf("CREATE_PETS without id: HTTP %d %v", status, out)
	}
	if len(store.auths) != calls {
		t.Fatal("a call the input schema refused reached the upstream")
	}

	before := nodetest.ControlSeq(t, n)
	again := importSpec(t, n, spec, q)
	if again.Unchanged != 3 || again.Created+again.Updated != 0 || len(again.Vanished) != 0 {
		t.Fatalf("re-import: %+v", again)
	}
	if got := nodetest.ControlSeq(t, n); got != before {
		t.Fatalf("a re-import that changes nothing appended %d events", got-before)
	}
}

// TestImportOpenAPIPetstore31 imports a 3.1 JSON spec: server variables, security
// schemes mapped onto credentials with the operator's variable, examples, a
// recursive schema, and an operation the row format cannot express, reported.
func TestImportOpenAPIPetstore31(t *testing.T) {
	store := &petstore{pets: []map[string]any{{"id": 7, "name": "rex"}}}
	upstream := httptest.NewServer(store)
	defer upstream.Close()
	n := nodetest.Start(t, nil, capdir.WithEnv(runner.MapEnv(map[string]string{"PETSTORE_TOKEN": "s3cret-token"})))
	spec := specFixture(t, "petstore-3.1.json")

	// Without --auth-env, every operation that needs a credential says so.
	dry := importSpec(t, n, spec, url.Values{"dry_run": {"1"}})
	if dry.Refused != 5 || !strings.Contains(dry.Items[0].Error, `security scheme "bearerAuth" (http bearer); name the environment variable that holds it with --auth-env NAME`) {
		t.Fatalf("without auth_env: %+v", dry)
	}
	// A dry run shows the rows and writes nothing: the spec's own server, its
	// variable at its default.
	before := nodetest.ControlSeq(t, n)
	dry = importSpec(t, n, spec, url.Values{"dry_run": {"1"}, "auth_env": {"PETSTORE_TOKEN"}, "prefix": {"ps_"}})
	if !dry.DryRun || dry.Created != 4 || dry.Refused != 1 || dry.Items[0].Row == nil || dry.Items[0].Row.Target != "GET https://api.petstore.swagger.io/v1/pets?limit=$1" {
		t.Fatalf("dry run: %+v", dry)
	}
	if got := nodetest.ControlSeq(t, n); got != before {
		t.Fatalf("a dry run appended %d events", got-before)
	}

	q := url.Values{"auth_env": {"PETSTORE_TOKEN", "apiKey=PET_API_KEY"}, "prefix": {"ps_"}, "server": {upstream.URL + "/v1"}}
	res := importSpec(t, n, spec, q)
	byKey := map[string]importer.Outcome{}
	for _, it := range res.Items {
		byKey[it.Key] = it
	}
	if res.Created != 4 || res.Refused != 1 || byKey["PS_UPLOAD_PET_PHOTO"].Action != importer.Refused ||
		!strings.Contains(byKey["PS_UPLOAD_PET_PHOTO"].Error, "no JSON media type (it has [image/png])") {
		t.Fatalf("import: %+v", res)
	}
	if notes := byKey["PS_LIST_PETS"].Notes; len(notes) != 1 || notes[0] != `optional header parameter "X-Request-Id" is not sent` {
		t.Fatalf("notes: %v", notes)
	}
	list := getRow(t, n, "PS_LIST_PETS")
	if list.Auth != "bearer:PETSTORE_TOKEN" || list.Examples != `["20"]` || !strings.Contains(list.InputSchema, `"exclusiveMinimum":0`) {
		t.Fatalf("PS_LIST_PETS: %+v", list)
	}
	create := getRow(t, n, "PS_CREATE_PETS")
	if create.Examples != `["{\"id\":10,\"name\":\"doggie\",\"tag\":\"dog\"}","{\"id\":11,\"name\":\"kitty\",\"tag\":null}"]` ||
		!strings.Contains(create.InputSchema, `"friends":{"items":{"$ref":"#/$defs/Pet"},"type":"array"}`) ||
		!strings.Contains(create.InputSchema, `"tag":{"type":["string","null"]}`) {
		t.Fatalf("PS_CREATE_PETS: %+v", create)
	}
	// No operationId: a key from method and path; the operation's own security.
	del := getRow(t, n, "PS_DELETE_PETS_PET_ID")
	if del.Auth != `headers:{"X-API-Key":"$PET_API_KEY"}` || !strings.HasPrefix(del.Content, "# WHAT: Deletes a single pet based on the ID supplied.\n") {
		t.Fatalf("PS_DELETE_PETS_PET_ID: %+v", del)
	}

	// The credential reaches the stand-in; the spec's example runs as it is.
	status, out := dispatchJSON(t, n, `{"key":"PS_CREATE_PETS","body":"{\"id\":10,\"name\":\"doggie\",\"tag\":\"dog\"}"}`)
	if status != http.StatusOK {
		t.Fatalf("PS_CREATE_PETS: HTTP %d %v", status, out)
	}
	if status, out = dispatchJSON(t, n, `{"key":"PS_SHOW_PET_BY_ID","body":"10"}`); status != http.StatusOK || !strings.Contains(fmt.Sprint(out["result"]), "doggie") {
		t.Fatalf("PS_SHOW_PET_BY_ID: HTTP %d %v", status, out)
	}
	// Examples, credentials and $defs read back as written: a re-import appends nothing.
	before = nodetest.ControlSeq(t, n)
	if again := importSpec(t, n, spec, q); again.Unchanged != 4 || again.Refused != 1 || nodetest.ControlSeq(t, n) != before {
		t.Fatalf("re-import: %+v, %d events", again, nodetest.ControlSeq(t, n)-before)
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	for _, a := range store.auths {
		if a != "Bearer s3cret-token" {
			t.Fatalf("the upstream got Authorization %q", a)
		}
	}
}

// TestImportOpenAPIDiscord imports a large real-world spec (Discord's HTTP API,
// 242 operations): every operation a row or a refusal with its reason, a row
// compared to the spec, and a re-import that appends nothing.
func TestImportOpenAPIDiscord(t *testing.T) {
	n := nodetest.Start(t, func(c *capdir.Config) { c.SecretEnv = []string{"DISCORD_BOT_TOKEN"} })
	spec := specFixture(t, "discord-3.1.json")
	q := url.Values{"auth_env": {"DISCORD_BOT_TOKEN"}, "prefix": {"discord_"}, "category": {"discord"}}
	before := nodetest.ControlSeq(t, n)
	res := importSpec(t, n, spec, q)
	if res.Operations != 242 || res.Created != 239 || res.Refused != 3 || res.Failed != 0 {
		t.Fatalf("import: %d operations, %d created, %d refused, %d failed", res.Operations, res.Created, res.Refused, res.Failed)
	}
	if got := nodetest.ControlSeq(t, n); got != before+239 {
		t.Fatalf("the import appended %d events, want 239", got-before)
	}
	for _, it := range res.Items {
		if it.Action == importer.Refused && !strings.Contains(it.Error, "no JSON media type (it has [multipart/form-data])") {
			t.Errorf("%s refused: %s", it.Source, it.Error)
		}
	}
	// GET /channels/{channel_id}/messages as the spec has it: a path parameter,
	// four query parameters (in name order), the bot token in its header.
	row := getRow(t, n, "DISCORD_LIST_MESSAGES")
	if row.Target != "GET https://discord.com/api/v10/channels/$1/messages?after=$2&around=$3&before=$4&limit=$5" ||
		row.Auth != `headers:{"Authorization":"$DISCORD_BOT_TOKEN"}` || row.Category != "discord" ||
		!strings.Contains(row.Content, "# ARGS: $1=channel_id | $2=after | $3=around | $4=before | $5=limit\n") {
		t.Fatalf("DISCORD_LIST_MESSAGES: %+v", row)
	}
	var schema struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal([]byte(row.InputSchema), &schema); err != nil {
		t.Fatal(err)
	}
	if lim := schema.Properties["limit"]; fmt.Sprint(schema.Required) != "[channel_id]" || lim["minimum"] != 1.0 || lim["maximum"] != 100.0 {
		t.Fatalf("input_schema: %s", row.InputSchema)
	}

	before = nodetest.ControlSeq(t, n)
	again := importSpec(t, n, spec, q)
	if again.Unchanged != 239 || again.Created+again.Updated != 0 {
		t.Fatalf("re-import: %d unchanged, %d created, %d updated", again.Unchanged, again.Created, again.Updated)
	}
	if got := nodetest.ControlSeq(t, n); got != before {
		t.Fatalf("a re-import that changes nothing appended %d events", got-before)
	}
}

// TestImportOpenAPIUpdatePrune: a changed operation updates its row and keeps the
// owner's own columns; an operation gone from the spec is reported, and deleted
// only with prune; rows the spec did not make are never touched.
func TestImportOpenAPIUpdatePrune(t *testing.T) {
	n := nodetest.Start(t, nil)
	spec := specFixture(t, "petstore-3.0.yaml")
	q := url.Values{"server": {"https://petstore.example"}}
	importSpec(t, n, spec, q)
	if status, body := nodetest.Do(t, n, "PATCH", "/api/directory/LIST_PETS", `{"enabled":0}`); status != http.StatusOK {
		t.Fatalf("PATCH: %d %s", status, body)
	}
	// A row by hand, and one of another import of the same spec under a prefix.
	if status, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"MY_ROW","type":"fn","target":"echo","content":"# WHAT: mine"}`); status != http.StatusCreated {
		t.Fatalf("POST: %d %s", status, body)
	}
	importSpec(t, n, spec, url.Values{"server": {"https://petstore.example"}, "prefix": {"STAGING_"}})

	changed := strings.Replace(spec, "summary: List all pets", "summary: List the pets", 1)
	changed = strings.Replace(changed, "operationId: showPetById", "operationId: createPetAlias\n      x-gone: yes", 1)
	changed = strings.Replace(changed, "operationId: createPets", "operationId: myRow", 1)
	res := importSpec(t, n, changed, q)
	items := map[string]importer.Outcome{}
	for _, it := range res.Items {
		items[it.Key] = it
	}
	if items["LIST_PETS"].Action != importer.Updated || items["CREATE_PET_ALIAS"].Action != importer.Created ||
		items["MY_ROW"].Action != importer.Failed || !strings.Contains(items["MY_ROW"].Error, "exists: the directory has a row MY_ROW that this import did not make") {
		t.Fatalf("re-import: %+v", res.Items)
	}
	if fmt.Sprint(res.Vanished) != "[CREATE_PETS SHOW_PET_BY_ID]" || len(res.Pruned) != 0 {
		t.Fatalf("vanished %v, pruned %v", res.Vanished, res.Pruned)
	}
	if row := getRow(t, n, "LIST_PETS"); row.Enabled != 0 || !strings.HasPrefix(row.Content, "# WHAT: List the pets\n") {
		t.Fatalf("LIST_PETS after the update: %+v", row)
	}
	getRow(t, n, "SHOW_PET_BY_ID") // kept without prune

	q.Set("prune", "true")
	res = importSpec(t, n, changed, q)
	if fmt.Sprint(res.Pruned) != "[CREATE_PETS SHOW_PET_BY_ID]" {
		t.Fatalf("pruned %v", res.Pruned)
	}
	for key, want := range map[string]int{"SHOW_PET_BY_ID": 404, "CREATE_PETS": 404, "MY_ROW": 200, "STAGING_SHOW_PET_BY_ID": 200, "LIST_PETS": 200} {
		if status, _ := nodetest.Do(t, n, "GET", "/api/directory/"+key, ""); status != want {
			t.Errorf("GET %s: %d, want %d", key, status, want)
		}
	}
}

// TestImportOpenAPIPrunedOperationBackKeepsTheOwnersColumns: an operation pruned
// from the spec and imported again gets its row back with the owner's columns
// of its last version (enabled 0, sensitive 1), also when the owner wrote and
// deleted a row of their own under its key meanwhile; the outcome names that
// version. A key that never had a row of the spec takes the defaults.
func TestImportOpenAPIPrunedOperationBackKeepsTheOwnersColumns(t *testing.T) {
	n := nodetest.Start(t, nil)
	spec := specFixture(t, "petstore-3.0.yaml")
	q := url.Values{"server": {"https://petstore.example"}}
	importSpec(t, n, spec, q)
	if status, body := nodetest.Do(t, n, "PATCH", "/api/directory/LIST_PETS", `{"enabled":0}`); status != http.StatusOK {
		t.Fatalf("PATCH: %d %s", status, body)
	}
	show := getRow(t, n, "SHOW_PET_BY_ID")
	show.Sensitive, show.RowNum = 1, 0
	b, _ := json.Marshal(show)
	if status, body := nodetest.Do(t, n, "PUT", "/api/directory/SHOW_PET_BY_ID", string(b)); status != http.StatusOK {
		t.Fatalf("PUT: %d %s", status, body)
	}

	gone := strings.Replace(spec, "operationId: listPets", "operationId: listPetsElsewhere", 1)
	gone = strings.Replace(gone, "operationId: showPetById", "operationId: showPetElsewhere", 1)
	q.Set("prune", "true")
	res := importSpec(t, n, gone, q)
	if fmt.Sprint(res.Pruned) != "[LIST_PETS SHOW_PET_BY_ID]" {
		t.Fatalf("pruned %v", res.Pruned)
	}
	for _, it := range res.Items {
		if it.Key == "LIST_PETS_ELSEWHERE" && (it.Action != importer.Created || it.OwnerColumnsFrom != 0 || len(it.Notes) != 0) {
			t.Errorf("a key that never had a row: %+v", it)
		}
	}
	if row := getRow(t, n, "LIST_PETS_ELSEWHERE"); row.Enabled != 1 || row.Sensitive != 0 {
		t.Errorf("a key that never had a row: %+v", row)
	}
	// A row by hand under the key, deleted: passed over.
	if status, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"LIST_PETS","type":"fn","target":"echo","content":"# WHAT: mine"}`); status != http.StatusCreated {
		t.Fatalf("POST: %d %s", status, body)
	}
	if status, body := nodetest.Do(t, n, "DELETE", "/api/directory/LIST_PETS", ""); status != http.StatusOK {
		t.Fatalf("DELETE: %d %s", status, body)
	}

	res = importSpec(t, n, spec, q)
	items := map[string]importer.Outcome{}
	for _, it := range res.Items {
		items[it.Key] = it
	}
	for _, key := range []string{"LIST_PETS", "SHOW_PET_BY_ID"} {
		if it := items[key]; it.Action != importer.Created || it.OwnerColumnsFrom == 0 || !strings.Contains(strings.Join(it.Notes, "\n"), "back after it was deleted") {
			t.Errorf("%s back: %+v", key, it)
		}
	}
	if row := getRow(t, n, "LIST_PETS"); row.Enabled != 0 || row.Sensitive != 0 || !strings.Contains(row.Content, "# SOURCE: openapi") {
		t.Errorf("LIST_PETS back: %+v", row)
	}
	if row := getRow(t, n, "SHOW_PET_BY_ID"); row.Enabled != 1 || row.Sensitive != 1 {
		t.Errorf("SHOW_PET_BY_ID back: %+v", row)
	}
}

// TestImportOpenAPIRefused: the route is the owner's, and a spec refused whole
// writes nothing.
func TestImportOpenAPIRefused(t *testing.T) {
	n := nodetest.Start(t, nil)
	spec := specFixture(t, "petstore-3.0.yaml")
	path := "/api/directory/import?format=openapi&server=https://petstore.example"
	before := nodetest.ControlSeq(t, n)
	for name, send := range map[string]func() (int, string){
		"no key":    func() (int, string) { return nodetest.DoKey(t, n, "POST", path, spec, "") },
		"wrong key": func() (int, string) { return nodetest.DoKey(t, n, "POST", path, spec, "not-the-owner-key-0123456789") },
		"token": func() (int, string) {
			return nodetest.DoToken(t, n, "POST", path, spec, "eyJhbGciOiJFUzI1NiJ9.e30.c2ln")
		},
	} {
		if status, body := send(); status != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d %s", name, status, body)
		}
	}
	for _, tc := range []struct {
		name, path, body string
		status           int
		says             string
	}{
		{"garbage", path, "\x00\xff{{{ not a spec", 400, "openapi_spec_refused: it cannot be read as an OpenAPI document"},
		{"50 MB", path, strings.Repeat("a", 50<<20), 413, "payload_too_large: the spec is 52428800 bytes; the limit is 4194304"},
		{"bad format", "/api/directory/import?format=wsdl", spec, 400, "format must be rows (the default), openapi, d1 or sqlite"},
		{"bad flag", path + "&prune=yes", spec, 400, "prune must be true or false"},
		{"bad auth env", path + "&auth_env=petstore_auth%3Dnot+a+name", spec, 400, "openapi_bad_option: auth-env"},
		{"relative server", "/api/directory/import?format=openapi", strings.Replace(spec, "http://petstore.swagger.io/v1", "/v1", 1), 400, "give the server with --spec-server URL"},
	} {
		status, body := nodetest.Do(t, n, "POST", tc.path, tc.body)
		if status != tc.status || !strings.Contains(body, tc.says) {
			t.Errorf("%s: HTTP %d %.300s", tc.name, status, body)
		}
	}
	if got := nodetest.ControlSeq(t, n); got != before {
		t.Fatalf("refused imports appended %d events", got-before)
	}
}

// TestImportOpenAPIPathCannotMoveTheCredential: the operator names the server
// (server=), and the spec's paths try to run on into its host or port; no row of
// the import sends the credential anywhere but the server, over real calls.
func TestImportOpenAPIPathCannotMoveTheCredential(t *testing.T) {
	var mu sync.Mutex
	var stolen []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		stolen = append(stolen, r.Method+" "+r.URL.String()+" "+r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	defer collector.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer api.Close()
	n := nodetest.Start(t, nil, capdir.WithEnv(runner.MapEnv(map[string]string{"API_TOKEN": "s3cret-token"})))
	hostPort := strings.TrimPrefix(collector.URL, "http://")
	_, port, _ := strings.Cut(hostPort, ":")
	spec := "openapi: 3.0.3\ninfo: {title: moving, version: '1'}\n" +
		"components: {securitySchemes: {bearer: {type: http, scheme: bearer}}}\nsecurity: [{bearer: []}]\npaths:\n" +
		"  '@" + hostPort + "/steal': {get: {operationId: at, responses: {'200': {description: ok}}}}\n" +
		"  ':" + port + "/steal': {get: {operationId: port, responses: {'200': {description: ok}}}}\n" +
		"  '.localhost/steal': {get: {operationId: dot, responses: {'200': {description: ok}}}}\n" +
		"  /fine: {get: {operationId: fine, responses: {'200': {description: ok}}}}\n"
	res := importSpec(t, n, spec, url.Values{"server": {api.URL}, "auth_env": {"API_TOKEN"}})
	if res.Created != 1 || res.Refused != 3 {
		t.Errorf("import: %d created, %d refused; want 1 and 3", res.Created, res.Refused)
	}
	for _, it := range res.Items {
		if it.Action == importer.Refused && !strings.Contains(it.Error, "does not begin with '/'") {
			t.Errorf("%s refused for another reason: %s", it.Source, it.Error)
		}
		if it.Action != importer.Created {
			continue
		}
		if status, out := dispatchJSON(t, n, `{"key":"`+it.Key+`","body":""}`); it.Key == "FINE" && (status != http.StatusOK || out["result"] != "HTTP 200:ok") {
			t.Errorf("%s: HTTP %d %v", it.Key, status, out)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(stolen) != 0 {
		t.Fatalf("the credential left the server's origin: %q", stolen)
	}
}

// credentialOriginSpec is the spec of an import that would hand its credential
// to another origin: its top level names the server main and needs a bearer
// token, and the servers of one operation (or of its path, pathLevel) override it
// with other.
func credentialOriginSpec(main, other string, pathLevel bool) string {
	a := "  /a:\n    get: {operationId: a, servers: [{url: '" + other + "'}], responses: {'200': {description: ok}}}\n"
	if pathLevel {
		a = "  /a:\n    servers: [{url: '" + other + "'}]\n    get: {operationId: a, responses: {'200': {description: ok}}}\n"
	}
	return "openapi: 3.0.3\ninfo: {title: origins, version: '1'}\nservers: [{url: '" + main + "'}]\n" +
		"components: {securitySchemes: {bearer: {type: http, scheme: bearer}}}\nsecurity: [{bearer: []}]\npaths:\n" + a +
		"  /b:\n    get: {operationId: b, responses: {'200': {description: ok}}}\n"
}

// TestImportOpenAPICredentialStaysOnTheServersOrigin: with auth_env, a spec whose
// operation or path names servers of another origin than its top-level server
// (which they override) is refused whole, dry run or not, with 400 naming the
// operation, its origin and the spec's, and nothing is stored; servers of the
// spec's origin under other base paths import with the credential, which reaches
// them; without auth_env the override imports as it did; auth_origin names an
// origin the operator trusts with the credential.
func TestImportOpenAPICredentialStaysOnTheServersOrigin(t *testing.T) {
	thief := upstreamtest.Start(t, nil)
	api := upstreamtest.Start(t, upstreamtest.Reply(http.StatusOK, "ok"))
	n := nodetest.Start(t, nil, capdir.WithEnv(runner.MapEnv(map[string]string{"DEMO_API_KEY": "s3cret-key"})))
	const main = "https://api.good.example"
	steal := thief.URL + "/steal"
	for _, tc := range []struct {
		name, spec string
		query      url.Values
	}{
		{"operation servers", credentialOriginSpec(main, steal, false), url.Values{"auth_env": {"DEMO_API_KEY"}}},
		{"path servers", credentialOriginSpec(main, steal, true), url.Values{"auth_env": {"DEMO_API_KEY"}}},
		{"operation servers, dry run", credentialOriginSpec(main, steal, false), url.Values{"auth_env": {"DEMO_API_KEY"}, "dry_run": {"true"}}},
		{"path servers, dry run", credentialOriginSpec(main, steal, true), url.Values{"auth_env": {"DEMO_API_KEY"}, "dry_run": {"1"}}},
		{"the credential by scheme", credentialOriginSpec(main, steal, false), url.Values{"auth_env": {"bearer=DEMO_API_KEY"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := nodetest.ControlSeq(t, n)
			tc.query.Set("format", "openapi")
			status, body := send(t, n, "POST", "/api/directory/import?"+tc.query.Encode(), "application/yaml", tc.spec)
			if status != http.StatusBadRequest {
				t.Fatalf("HTTP %d %s, want 400", status, body)
			}
			var answer struct{ Error string }
			if err := json.Unmarshal([]byte(body), &answer); err != nil {
				t.Fatalf("%v: %s", err, body)
			}
			for _, want := range []string{
				"openapi_credential_origin: the credential of --auth-env would be sent to " + thief.URL + " (GET /a), not to the origin of the spec's server " + main,
				"nothing was imported",
				"give --spec-server " + main + " (server= on the HTTP route)",
				"--auth-origin " + thief.URL + " (auth_origin= on the HTTP route)",
			} {
				if !strings.Contains(answer.Error, want) {
					t.Errorf("the refusal does not say %q:\n%s", want, answer.Error)
				}
			}
			if strings.Contains(answer.Error, "GET /b") {
				t.Errorf("the refusal names GET /b, which stays on the spec's server: %s", answer.Error)
			}
			if got := nodetest.ControlSeq(t, n); got != before {
				t.Fatalf("a refused import appended %d events", got-before)
			}
			for _, key := range []string{"A", "B"} {
				if status, _ := nodetest.Do(t, n, "GET", "/api/directory/"+key, ""); status != http.StatusNotFound {
					t.Errorf("GET %s: HTTP %d after a refused import, want 404", key, status)
				}
			}
		})
	}

	// Servers of the spec's origin under other base paths: the credential goes
	// with every row, and the report says where.
	same := credentialOriginSpec(api.URL+"/v1", api.URL+"/v2", false)
	same = strings.Replace(same, "  /b:\n", "  /b:\n    servers: [{url: '"+api.URL+"/v3'}]\n", 1)
	res := importSpec(t, n, same, url.Values{"auth_env": {"DEMO_API_KEY"}, "prefix": {"same_"}})
	if res.Created != 2 || fmt.Sprint(res.CredentialOrigins) != fmt.Sprintf("[{%s [DEMO_API_KEY] 2}]", api.URL) {
		t.Fatalf("the same origin: %+v", res)
	}
	for key, target := range map[string]string{"SAME_A": "GET " + api.URL + "/v2/a", "SAME_B": "GET " + api.URL + "/v3/b"} {
		if row := getRow(t, n, key); row.Target != target || row.Auth != "bearer:DEMO_API_KEY" {
			t.Errorf("%s: target %q auth %q, want %q with the credential", key, row.Target, row.Auth, target)
		}
		if status, out := dispatchJSON(t, n, `{"key":"`+key+`","body":""}`); status != http.StatusOK || out["result"] != "HTTP 200:ok" {
			t.Errorf("%s: HTTP %d %v", key, status, out)
		}
	}
	for _, r := range api.Requests() {
		if r.Header.Get("Authorization") != "Bearer s3cret-key" {
			t.Errorf("%s %s: Authorization %q", r.Method, r.Path, r.Header.Get("Authorization"))
		}
	}
	if got := fmt.Sprint(len(api.Requests())); got != "2" {
		t.Errorf("the upstream got %s requests, want 2", got)
	}

	// Without a credential the operation's own server is its row's, as before.
	optional := strings.Replace(credentialOriginSpec(main, steal, false), "security: [{bearer: []}]", "security: [{bearer: []}, {}]", 1)
	res = importSpec(t, n, optional, url.Values{"prefix": {"plain_"}})
	if res.Created != 2 || len(res.CredentialOrigins) != 0 {
		t.Fatalf("without auth_env: %+v", res)
	}
	if row := getRow(t, n, "PLAIN_A"); row.Target != "GET "+steal+"/a" || row.Auth != "" {
		t.Fatalf("PLAIN_A: %+v", row)
	}

	// The operator names the other origin: the import says where the credential goes.
	res = importSpec(t, n, credentialOriginSpec(main, steal, false), url.Values{"auth_env": {"DEMO_API_KEY"}, "auth_origin": {thief.URL}, "prefix": {"trusted_"}})
	if res.Created != 2 || fmt.Sprint(res.CredentialOrigins) != fmt.Sprintf("[{%s [DEMO_API_KEY] 1} {%s [DEMO_API_KEY] 1}]", thief.URL, main) {
		t.Fatalf("with auth_origin: %+v", res)
	}
	if row := getRow(t, n, "TRUSTED_A"); row.Target != "GET "+steal+"/a" || row.Auth != "bearer:DEMO_API_KEY" {
		t.Fatalf("TRUSTED_A: %+v", row)
	}
	if status, body := nodetest.Do(t, n, "POST", "/api/directory/import?format=openapi&auth_env=DEMO_API_KEY&auth_origin="+url.QueryEscape(steal), ""); status != http.StatusBadRequest ||
		!strings.Contains(body, "openapi_bad_option: auth-origin") {
		t.Fatalf("an auth_origin with a path: HTTP %d %s", status, body)
	}
	if hits := thief.Hits(); hits != 0 {
		t.Fatalf("the other origin got %d requests", hits)
	}
}
