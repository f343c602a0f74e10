package api_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/api/ownerkey"
	"github.com/capdir/capdir/internal/nodetest"
)

// doHost sends a request to n under the Host header host, with the owner's key
// when key is set: the status and the body.
func doHost(t *testing.T, n *capdir.Node, host, method, path, body, key string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, n.URL()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	if key != "" {
		req.Header.Set("x-terminal-key", key)
	}
	if body != "" {
		req.Header.Set("content-type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s as %s: %v", method, path, host, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// A node listening on a loopback address answers only requests for a loopback
// host (or its public URL's): a web page whose name was made to resolve to
// 127.0.0.1 (DNS rebinding) is same-origin to the browser, and must not read
// the metrics, reach any route, or send wrong owner keys until the owner's own
// key is throttled. It is refused before anything is read, counted or stored.
func TestForeignHostOnALoopbackListenerIsRefused(t *testing.T) {
	n := nodetest.Start(t, nil) // on 127.0.0.1, the console served
	before := nodetest.ControlSeq(t, n)
	const evil = "evil.example:18181"
	for _, r := range []struct{ method, path, body, key string }{
		{"GET", "/healthz", "", ""},
		{"GET", "/metrics", "", ""},
		{"GET", "/api/directory", "", nodetest.Key},
		{"POST", "/api/directory", `{"key":"A","type":"fn","target":"echo"}`, nodetest.Key},
		{"POST", "/api/dispatch", `{"key":"A","body":""}`, wrongKey},
		{"POST", "/console/signin", "", ""},
		{"GET", "/console/", "", ""},
		{"POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nodetest.Key},
		{"GET", "/no/such/route", "", ""},
	} {
		code, body := doHost(t, n, evil, r.method, r.path, r.body, r.key)
		if code != 403 || !strings.Contains(body, `"error":"host_not_allowed"`) || !strings.Contains(body, `"host":"evil.example:18181"`) ||
			!strings.Contains(body, "--public-url") {
			t.Fatalf("%s %s as %s: %d %s; want 403 host_not_allowed naming the host and what to do", r.method, r.path, evil, code, body)
		}
	}
	// More wrong keys than the throttle allows, all under the foreign host: none
	// is counted, so the owner's key still works from the same address.
	for i := 0; i <= ownerkey.DefaultLimit; i++ {
		if code, body := doHost(t, n, evil, "GET", "/api/directory", "", wrongKey); code != 403 {
			t.Fatalf("wrong key %d as %s: %d %s", i+1, evil, code, body)
		}
	}
	if code, body := nodetest.Do(t, n, "GET", "/api/directory", ""); code != 200 {
		t.Fatalf("the owner after the foreign host's wrong keys: %d %s; want 200", code, body)
	}
	if after := nodetest.ControlSeq(t, n); after != before {
		t.Fatalf("the directory's log moved %d -> %d", before, after)
	}
	// Every loopback name passes, in any case and with or without a port.
	for _, host := range []string{"localhost", "LOCALHOST:1", "127.0.0.1", "127.0.0.2:9", "[::1]:80", "::1", "0.0.0.0:1", "[::]:1"} {
		if code, body := doHost(t, n, host, "GET", "/healthz", "", ""); code != 200 {
			t.Errorf("GET /healthz as %s: %d %s; want 200", host, code, body)
		}
	}
	// A name that only looks local is foreign.
	for _, host := range []string{"localhost.evil.example", "127.0.0.1.nip.io", "evil.example", "[::ffff:7f00:1]x", "10.0.0.1.evil.example"} {
		if code, body := doHost(t, n, host, "GET", "/healthz", "", ""); code != 403 {
			t.Errorf("GET /healthz as %s: %d %s; want 403", host, code, body)
		}
	}
}

// The public URL's host is the node's own name: a proxy on the same machine that
// forwards it to a loopback listener is answered.
func TestPublicURLHostOnALoopbackListenerIsAnswered(t *testing.T) {
	n := nodetest.Start(t, func(c *capdir.Config) { c.API.PublicURL = "https://capdir.example.com/" })
	for _, host := range []string{"capdir.example.com", "CapDir.Example.com:443"} {
		if code, body := doHost(t, n, host, "GET", "/api/directory", "", nodetest.Key); code != 200 {
			t.Errorf("GET /api/directory as %s: %d %s; want 200", host, code, body)
		}
	}
	if code, body := doHost(t, n, "other.example.com", "GET", "/api/directory", "", nodetest.Key); code != 403 {
		t.Errorf("GET /api/directory as another name: %d %s; want 403", code, body)
	}
}
