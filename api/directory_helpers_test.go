package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/internal/nodetest"
)

// compliantRow is a POST body that passes every hygiene gate.
const compliantRow = nodetest.CompliantRow

// send is nodetest.Do with an explicit content type.
func send(t testing.TB, n *capdir.Node, method, path, contentType, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, n.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-terminal-key", nodetest.Key)
	if contentType != "" {
		req.Header.Set("content-type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// decode parses a JSON response body into v.
func decode(t testing.TB, body string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("response %q: %v", body, err)
	}
}

// mustDo sends a request and fails unless the status is want.
func mustDo(t testing.TB, n *capdir.Node, want int, method, path, body string) string {
	t.Helper()
	status, got := nodetest.Do(t, n, method, path, body)
	if status != want {
		t.Fatalf("%s %s: HTTP %d %s, want %d", method, path, status, got, want)
	}
	return got
}
