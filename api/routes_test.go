package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/nodetest"
)

// A request no route serves gets JSON, like every other answer: 404 naming the path,
// or 405 naming the allowed methods in the body and in the Allow header. The owner
// key changes nothing, and nothing is run or written.
func TestUnknownRoutesAndMethodsAnswerJSON(t *testing.T) {
	n := nodetest.Start(t, nil)
	before, beforeData := nodetest.ControlSeq(t, n), dataSeq(t, n)
	for _, tc := range []struct {
		method, path string
		status       int
		allow        string // for 405
	}{
		{"GET", "/", 404, ""},
		{"GET", "/nope", 404, ""},
		{"GET", "/api/directoryx", 404, ""},
		{"POST", "/api/receipts/inv_x/more", 404, ""},
		{"DELETE", "/api/directory", 405, "GET, HEAD, POST"},
		{"PUT", "/api/dispatch", 405, "GET, HEAD, POST"},
		{"POST", "/api/directory/GREET", 405, "DELETE, GET, HEAD, PATCH, PUT"},
		{"DELETE", "/api/receipts/inv_x", 405, "GET, HEAD"},
		{"POST", "/receipt/inv_x", 405, "GET, HEAD"},
		{"PATCH", "/api/breaker/GREET", 405, "DELETE, GET, HEAD"},
		{"POST", "/healthz", 405, "GET, HEAD"},
		{"GET", "/api/directory/import", 404, ""}, // a GET of the row "import", which is not there
	} {
		for _, key := range []string{"", nodetest.Key} {
			req, err := http.NewRequest(tc.method, n.URL()+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if key != "" {
				req.Header.Set("x-terminal-key", key)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var got map[string]string
			if err := json.Unmarshal(b, &got); err != nil || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s %s: %d %q (%s): not JSON", tc.method, tc.path, resp.StatusCode, b, resp.Header.Get("Content-Type"))
				continue
			}
			status, want := tc.status, map[string]string{"error": "not_found", "path": tc.path}
			switch {
			case tc.status == 405:
				want = map[string]string{"error": "method_not_allowed", "allow": tc.allow}
			case tc.path == "/api/directory/import" && key != "":
				want = map[string]string{"error": "not_found", "key": "import"}
			case tc.path == "/api/directory/import":
				status, want = 401, map[string]string{"error": "unauthorized", "how_to_fix": "send the owner key in the x-terminal-key header"}
			}
			if resp.StatusCode != status || !equal(got, want) {
				t.Errorf("%s %s (key %q): %d %s; want %d %v", tc.method, tc.path, key, resp.StatusCode, b, status, want)
			}
			if allow := resp.Header.Get("Allow"); allow != tc.allow {
				t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, allow, tc.allow)
			}
		}
	}
	if nodetest.ControlSeq(t, n) != before || dataSeq(t, n) != beforeData {
		t.Fatal("a request no route serves appended to the log")
	}
	// A node serves /metrics; a path the mux cleans is still redirected.
	if code, _ := nodetest.DoKey(t, n, "GET", "/metrics", "", ""); code != 200 {
		t.Errorf("GET /metrics: %d", code)
	}
	req, _ := http.NewRequest("GET", n.URL()+"/api//directory", nil)
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || !strings.HasSuffix(resp.Header.Get("Location"), "/api/directory") {
		t.Errorf("GET /api//directory: %d Location %q; want the mux's redirect to /api/directory", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
