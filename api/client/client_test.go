package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/api/client"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/deptest"
	"github.com/capdir/capdir/internal/nodetest"
)

// apiError fails the test unless err is an *client.Error with status and a message
// starting with prefix.
func apiError(t *testing.T, what string, err error, status int, prefix string) *client.Error {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) || e.Status != status || !strings.HasPrefix(e.Message, prefix) {
		t.Fatalf("%s: %v; want an *client.Error %d %q…", what, err, status, prefix)
	}
	return e
}

// Every typed method against a real node, and the errors as *client.Error with
// the server's status, message and body.
func TestClientAgainstANode(t *testing.T) {
	n := nodetest.Start(t, nil)
	ctx := context.Background()
	c, err := client.New(n.URL()+"/", nodetest.Key)
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL() != n.URL() {
		t.Fatalf("BaseURL %q", c.BaseURL())
	}
	row := map[string]any{"key": "GREET", "type": "fn", "target": "echo", "category": "demo", "content": "# WHAT: greet\n[\"Hello, $1!\"]"}
	if w, err := c.CreateRow(ctx, row); err != nil || !w.OK || !w.Created || w.Key != "GREET" || w.UpdatedAt == "" {
		t.Fatalf("create: %+v %v", w, err)
	}
	_, err = c.CreateRow(ctx, row)
	if e := apiError(t, "create again", err, 409, "exists: GREET is already in the directory"); !bytes.Contains(e.Body, []byte(`"key":"GREET"`)) {
		t.Fatalf("409 body %s", e.Body)
	}
	if w, err := c.PutRow(ctx, "OTHER", map[string]any{"type": "fn", "target": "now", "content": "# WHAT: other"}); err != nil || !w.Created {
		t.Fatalf("put new: %+v %v", w, err)
	}
	if w, err := c.PutRow(ctx, "OTHER", map[string]any{"type": "fn", "target": "echo", "content": "# WHAT: other"}); err != nil || w.Created {
		t.Fatalf("put again: %+v %v", w, err)
	}
	if w, err := c.PatchRow(ctx, "OTHER", map[string]any{"category": "demo", "runner": "nats"}); err != nil || len(w.Ignored) != 1 || w.Ignored[0] != "runner" {
		t.Fatalf("patch: %+v %v", w, err)
	}
	_, err = c.PatchRow(ctx, "OTHER", map[string]any{"type": "lambda"})
	apiError(t, "bad patch", err, 400, `type: must be one of fn, http, agent, flow`)
	if r, err := c.GetRow(ctx, "GREET"); err != nil || r.Key != "GREET" || r.RowNum != 1 {
		t.Fatalf("get: %+v %v", r, err)
	}
	if p, err := c.ListRows(ctx, client.ListOptions{Category: "demo", Limit: 1, Offset: 1}); err != nil || p.Total != 2 || len(p.Rows) != 1 || p.Rows[0].Key != "OTHER" {
		t.Fatalf("list: %+v %v", p, err)
	}
	_, err = c.ListRows(ctx, client.ListOptions{Type: "lambda"})
	apiError(t, "bad filter", err, 400, "bad query parameter: type must be one of")

	res, err := c.Dispatch(ctx, client.DispatchRequest{Key: "GREET", Body: "Ada"})
	if err != nil || !res.OK || !res.Ran || res.Result != "Hello, Ada!" || res.Proof.Status != "PROVEN_MATERIAL_RESULT" || !bytes.Contains(res.Raw, []byte(`"result":"Hello, Ada!"`)) {
		t.Fatalf("dispatch: %+v %v", res, err)
	}
	if res, err := c.Dispatch(ctx, client.DispatchRequest{Key: "GREET", Body: "Ada", Shape: true}); err != nil || res.Ran || len(res.Shape) == 0 || res.Proof.Status != "SHAPE_ONLY" {
		t.Fatalf("shape: %+v %v", res, err)
	}
	_, err = c.Dispatch(ctx, client.DispatchRequest{Key: "GRET"})
	if e := apiError(t, "unknown key", err, 404, "unknown_key"); !bytes.Contains(e.Body, []byte(`"did_you_mean":["GREET"]`)) {
		t.Fatalf("unknown key body %s", e.Body)
	}
	rc, err := c.Receipt(ctx, res.Proof.InvocationID)
	if err != nil || rc.InvocationID != res.Proof.InvocationID || rc.Body != "Ada" || rc.Result != "Hello, Ada!" {
		t.Fatalf("receipt: %+v %v", rc, err)
	}
	pub, err := c.PublicReceipt(ctx, res.Proof.InvocationID)
	if in, _ := wire.KeyedFingerprint(rc.HMAC.Salt, "Ada"); err != nil || pub.HMAC == nil || pub.HMAC.Input != in || pub.HMAC.Salt != "" || pub.Fingerprints.Contract != rc.Fingerprints.Contract {
		t.Fatalf("public receipt: %+v %v", pub, err)
	}
	_, err = c.Receipt(ctx, "inv_nope")
	apiError(t, "unknown receipt", err, 404, "not_found")
	if rcs, err := c.Receipts(ctx, "GREET", 10); err != nil || len(rcs) != 2 {
		t.Fatalf("receipts: %d %v", len(rcs), err)
	}

	if bs, err := c.Breakers(ctx); err != nil || len(bs) != 0 {
		t.Fatalf("breakers: %+v %v", bs, err)
	}
	if b, err := c.Breaker(ctx, "GREET"); err != nil || b.Key != "GREET" || b.Open {
		t.Fatalf("breaker: %+v %v", b, err)
	}
	if err := c.ResetBreaker(ctx, "GREET"); err != nil {
		t.Fatalf("reset: %v", err)
	}
	apiError(t, "reset unknown", c.ResetBreaker(ctx, "NOPE"), 404, "not_found")

	var exported bytes.Buffer
	if k, err := c.Export(ctx, &exported, client.ExportOptions{NDJSON: true}); err != nil || k != 2 || strings.Count(exported.String(), "\n") != 2 {
		t.Fatalf("export: %d %v\n%s", k, err, exported.String())
	}
	if err := c.DeleteRow(ctx, "GREET"); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetRow(ctx, "GREET")
	apiError(t, "get deleted", err, 404, "not_found")
	apiError(t, "delete again", c.DeleteRow(ctx, "GREET"), 404, "not_found")
	if res, err := c.Import(ctx, bytes.NewReader(exported.Bytes()), client.ImportOptions{Upsert: true}); err != nil || res.OK != 2 || len(res.Failed) != 0 {
		t.Fatalf("import: %+v %v", res, err)
	}
	if res, err := c.Import(ctx, strings.NewReader(`{"key":"X","type":"lambda"}`), client.ImportOptions{}); err != nil || len(res.Failed) != 1 {
		t.Fatalf("import of a bad row: %+v %v", res, err)
	}

	wrong, _ := client.New(n.URL(), "not-the-owner-key-0123456789")
	_, err = wrong.ListRows(ctx, client.ListOptions{})
	if e := apiError(t, "wrong key", err, 401, "unauthorized"); e.Error() != "GET /api/directory: HTTP 401: unauthorized" {
		t.Fatalf("401 text %q", e.Error())
	}
}

// A bad base URL or option fails at New; a server that does not answer is a
// *TransportError.
func TestClientConfigAndTransportErrors(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:8080", "ftp://x", "http://"} {
		if _, err := client.New(u, "k"); err == nil {
			t.Errorf("New(%q) accepted", u)
		}
	}
	if _, err := client.New("http://x", "k", client.WithTimeout(-1)); err == nil {
		t.Error("a negative timeout was accepted")
	}
	if _, err := client.New("http://x", "k", client.WithHTTPClient(nil)); err == nil {
		t.Error("a nil http.Client was accepted")
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c, err := client.New(url, "k")
	if err != nil {
		t.Fatal(err)
	}
	var te *client.TransportError
	if _, err := c.Breakers(context.Background()); !errors.As(err, &te) || te.Method != "GET" || te.Path != "/api/breaker" {
		t.Fatalf("closed server: %v", err)
	}
}

// A program that only talks to capdir over HTTP stays light: the client depends on
// no server-side package, not on NATS nor the JSON Schema compiler. The answers it
// reads (rows, receipts, reports) are api/answer's, of the standard library only.
func TestClientStaysLight(t *testing.T) {
	deptest.Forbid(t, "github.com/capdir/capdir/api/client",
		"github.com/nats-io/", "github.com/santhosh-tekuri/jsonschema", "go.etcd.io/bbolt", "github.com/prometheus/",
		"github.com/capdir/capdir/projector", "github.com/capdir/capdir/dispatcher", "github.com/capdir/capdir/contract",
		"github.com/capdir/capdir/eventlog", "github.com/capdir/capdir/api/importer",
		"github.com/capdir/capdir=", "github.com/capdir/capdir/api=")
}

// An import whose NDJSON body stops early (here: over the node's import cap, sent
// without a length) still reports the rows it wrote, with the error, beside the
// *Error; a body refused whole reports nothing.
func TestClientImportCutShortReportsItsRows(t *testing.T) {
	n := nodetest.Start(t, func(c *capdir.Config) { c.API.MaxImportBody = 16 << 10 })
	c, err := client.New(n.URL(), nodetest.Key)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for i := range 1000 {
		rows = append(rows, fmt.Sprintf(`{"key":"CUT_%04d","type":"fn","target":"now"}`, i))
	}
	ndjson := io.MultiReader(strings.NewReader(strings.Join(rows, "\n"))) // no length: chunked
	res, err := c.Import(context.Background(), ndjson, client.ImportOptions{ContentType: "application/x-ndjson"})
	apiError(t, "NDJSON over the cap", err, http.StatusRequestEntityTooLarge, "payload_too_large: the import body is more than 16384 bytes")
	if res.OK == 0 || res.Failed == nil || !strings.HasSuffix(res.Error, "the rows before that point were imported (see ok and failed)") {
		t.Fatalf("report %+v", res)
	}
	array := io.MultiReader(strings.NewReader("[" + strings.Join(rows, ",") + "]"))
	res, err = c.Import(context.Background(), array, client.ImportOptions{})
	apiError(t, "array over the cap", err, http.StatusRequestEntityTooLarge, "payload_too_large: the import body is more than 16384 bytes")
	if res.OK != 0 || res.Failed != nil || res.Error != "" {
		t.Fatalf("a refused body reported %+v", res)
	}
}
