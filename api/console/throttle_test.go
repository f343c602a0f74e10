package console_test

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/api/ownerkey"
	"github.com/capdir/capdir/internal/nodetest"
)

// fromIP is a console client whose connections come from the loopback address ip
// (Linux routes all of 127.0.0.0/8 to lo).
func fromIP(t *testing.T, n *capdir.Node, ip string) *client {
	c := newClient(t, n.URL())
	c.hc.Transport = &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext}
	return c
}

// apiCall sends an owner request with key to the API from c's address: its status
// and body.
func (c *client) apiCall(method, path, body, key string) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("x-terminal-key", key)
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The console's sign-in, the API and /mcp count wrong owner keys against one
// throttle per address: wrong keys on the API throttle the console's sign-in,
// wrong sign-ins throttle the API and /mcp, and a mix of both reaches the limit
// together.
func TestConsoleAndAPIShareTheOwnerKeyThrottle(t *testing.T) {
	n := startNode(t)
	const wrong = "wrong-key-0123456789"
	signInThrottled := func(c *client, what string) {
		t.Helper()
		resp, body := c.do("POST", "/console/signin", url.Values{"key": {nodetest.Key}}, nil)
		if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "too_many_sign_ins") || len(resp.Cookies()) != 0 {
			t.Errorf("%s, the right key's sign-in: %d %s; want the console's 429 too_many_sign_ins", what, resp.StatusCode, body)
		}
	}
	apiThrottled := func(c *client, what string) {
		t.Helper()
		if code, body := c.apiCall("GET", "/api/directory", "", nodetest.Key); code != 429 || !strings.Contains(body, `"too_many_wrong_keys"`) {
			t.Errorf("%s, the right key on the API: %d %s; want 429 too_many_wrong_keys", what, code, body)
		}
		if code, body := c.apiCall("POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nodetest.Key); code != 429 {
			t.Errorf("%s, the right key on /mcp: %d %s; want 429", what, code, body)
		}
	}
	wrongSignIn := func(c *client) {
		t.Helper()
		if resp, body := c.do("POST", "/console/signin", url.Values{"key": {wrong}}, nil); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a wrong sign-in: %d %s; want 401", resp.StatusCode, body)
		}
	}
	wrongAPI := func(c *client) {
		t.Helper()
		if code, body := c.apiCall("GET", "/api/directory", "", wrong); code != 401 {
			t.Fatalf("a wrong key on the API: %d %s; want 401", code, body)
		}
	}

	viaAPI := fromIP(t, n, "127.0.0.11")
	for i := 0; i < ownerkey.DefaultLimit; i++ {
		wrongAPI(viaAPI)
	}
	signInThrottled(viaAPI, "after wrong keys on the API")

	viaConsole := fromIP(t, n, "127.0.0.12")
	for i := 0; i < ownerkey.DefaultLimit; i++ {
		wrongSignIn(viaConsole)
	}
	apiThrottled(viaConsole, "after wrong sign-ins")

	mixed := fromIP(t, n, "127.0.0.13")
	for i := 0; i < ownerkey.DefaultLimit; i++ {
		if i%2 == 0 {
			wrongAPI(mixed)
		} else {
			wrongSignIn(mixed)
		}
	}
	signInThrottled(mixed, "after wrong keys on both")
	apiThrottled(mixed, "after wrong keys on both")

	fromIP(t, n, "127.0.0.14").signIn() // another address is not held back
}
