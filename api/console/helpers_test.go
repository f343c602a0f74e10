package console_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/api/console"
	"github.com/capdir/capdir/internal/nodetest"
)

// ownerKey is the secret no console answer may hold, in any form.
var ownerKey = []nodetest.Secret{{Name: "owner key", Value: nodetest.Key}}

// client is a browser's HTTP side without the browser: a cookie jar, redirects
// not followed, and every answer checked for the console's headers and for the
// owner key.
type client struct {
	t    testing.TB
	base string
	hc   *http.Client
	// header is sent with every request.
	header http.Header
}

func newClient(t testing.TB, base string) *client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &client{t: t, base: base, header: http.Header{},
		hc: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// do sends the request (a form body when form is not nil) and returns the answer
// and its body, after checking both.
func (c *client) do(method, path string, form url.Values, header map[string]string) (*http.Response, string) {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	c.check(method+" "+path, resp, b)
	return resp, string(b)
}

// check fails the test when an answer lacks the console's security headers or
// holds the owner key.
func (c *client) check(what string, resp *http.Response, body []byte) {
	c.t.Helper()
	if got := resp.Header.Get("Content-Security-Policy"); got != console.CSP {
		c.t.Errorf("%s: Content-Security-Policy %q, want %q", what, got, console.CSP)
	}
	for h, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
		if got := resp.Header.Get(h); got != want {
			c.t.Errorf("%s: %s %q, want %q", what, h, got, want)
		}
	}
	var head strings.Builder
	resp.Header.Write(&head)
	for _, l := range append(nodetest.FindSecrets(what+" headers", []byte(head.String()), ownerKey), nodetest.FindSecrets(what+" body", body, ownerKey)...) {
		c.t.Errorf("the owner key leaked: %s", l)
	}
}

// signIn signs in with the owner key and fails unless it is sent on to the console.
func (c *client) signIn() {
	c.t.Helper()
	resp, body := c.do("POST", "/console/signin", url.Values{"key": {nodetest.Key}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/" {
		c.t.Fatalf("sign-in: %d %s (Location %q), want 303 to /console/", resp.StatusCode, body, resp.Header.Get("Location"))
	}
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`)

// csrf is the CSRF token the page at path carries.
func (c *client) csrf(path string) string {
	c.t.Helper()
	resp, body := c.do("GET", path, nil, nil)
	m := csrfMeta.FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		c.t.Fatalf("GET %s: %d, no CSRF token in %s", path, resp.StatusCode, body)
	}
	return m[1]
}

// startNode starts a node serving the console on loopback.
func startNode(t testing.TB) *capdir.Node {
	n := nodetest.Start(t, nil)
	if n.ConsoleURL() == "" {
		t.Fatal("the node serves no console on a loopback listener")
	}
	return n
}
