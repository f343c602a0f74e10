package e2e_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// refusalWatch keeps the answers of a cluster's nodes that a failover must not
// give: a 502 (an append that got no answer was not sent again), and a 503 without
// Retry-After (a refusal that does not say when to come back).
type refusalWatch struct {
	mu  sync.Mutex
	bad []string
}

// transport wraps next, watching every answer it carries.
func (w *refusalWatch) transport(next http.RoundTripper) http.RoundTripper {
	return refusalTransport{next, w}
}

func (w *refusalWatch) violations() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.bad...)
}

type refusalTransport struct {
	http.RoundTripper
	w *refusalWatch
}

func (r refusalTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.RoundTripper.RoundTrip(req)
	if err != nil || (resp.StatusCode != http.StatusBadGateway && (resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "")) {
		return resp, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	r.w.mu.Lock()
	r.w.bad = append(r.w.bad, fmt.Sprintf("%s %s answered %d (Retry-After %q): %s", req.Method, req.URL.Path, resp.StatusCode, resp.Header.Get("Retry-After"), bytes.TrimSpace(body)))
	r.w.mu.Unlock()
	return resp, nil
}
