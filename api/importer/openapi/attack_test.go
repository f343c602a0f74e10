package openapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/capdir/capdir/api/importer/openapi"
)

// No $ref of a spec reaches the network: remote refs in a path item, a request
// body, a parameter and a component schema, and a schema's $id or $schema
// naming a URL, are refused or kept as data, and the server they name is
// never asked for anything.
func TestConvertReachesNoNetwork(t *testing.T) {
	var hits atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"type":"object"}`))
	}))
	defer hs.Close()
	remote := hs.URL + "/schema.json"
	head := `{"openapi":"3.1.0","info":{"title":"x","version":"1"},"servers":[{"url":"https://x.example"}],`
	for _, doc := range []string{
		head + `"paths":{"/a":{"$ref":"` + remote + `#/a"}}}`,
		head + `"paths":{"/a":{"post":{"requestBody":{"content":{"application/json":{"schema":{"$ref":"` + remote + `"}}}},"responses":{}}}}}`,
		head + `"paths":{"/a":{"get":{"parameters":[{"$ref":"` + remote + `#/p"}],"responses":{}}}}}`,
		head + `"paths":{"/a":{"get":{"responses":{}}}},"components":{"schemas":{"S":{"$ref":"` + remote + `"}}}}`,
		head + `"paths":{"/a":{"post":{"requestBody":{"content":{"application/json":{"schema":{"$id":"` + remote + `","$schema":"` + remote +
			`","type":"object","properties":{"n":{"$ref":"` + remote + `#/n"}}}}}},"responses":{}}}}}`,
	} {
		openapi.Convert(context.Background(), []byte(doc), openapi.Options{}) // refused, or a row whose schema names the URL as data
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the import asked the remote server %d times", n)
	}
}
