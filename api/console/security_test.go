package console_test

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/nodetest"
)

const greetRow = `{"key":"GREET","type":"fn","target":"echo","category":"demo","content":"# WHAT: greets <b>you</b>\n[\"Hello, $1!\"]"}`

// consolePages are the pages a signed-out browser must get nothing of.
var consolePages = []string{"/console/", "/console/rows/GREET", "/console/rows/GREET/edit", "/console/rows/new",
	"/console/rows/GREET/delete", "/console/receipts", "/console/receipts/inv_01jd0000000000000000000000", "/console/approvals",
	"/console/breakers", "/console/tokens", "/console/health", "/console/nothing-here"}

func TestConsoleSignedOutGetsNothing(t *testing.T) {
	n := startNode(t)
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", greetRow); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	for _, cookie := range []string{"", "forged-session-id", strings.Repeat("A", 43)} {
		c := newClient(t, n.URL())
		if cookie != "" {
			c.header.Set("Cookie", "capdir_console="+cookie)
		}
		for _, p := range consolePages {
			resp, body := c.do("GET", p, nil, nil)
			if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/console/signin?next=") {
				t.Errorf("cookie %q: GET %s: %d (Location %q), want 303 to sign in", cookie, p, resp.StatusCode, resp.Header.Get("Location"))
			}
			if strings.Contains(body, "GREET") && !strings.Contains(body, "signin") || strings.Contains(body, "greets") {
				t.Errorf("cookie %q: GET %s shows row data: %s", cookie, p, body)
			}
		}
		if resp, body := c.do("GET", "/console/events?topics=rows", nil, nil); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("cookie %q: live stream %d %s, want 401", cookie, resp.StatusCode, body)
		}
		resp, _ := c.do("POST", "/console/rows/GREET/delete", url.Values{"confirm": {"GREET"}, "csrf": {"x"}}, nil)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("cookie %q: delete %d, want 401", cookie, resp.StatusCode)
		}
	}
	if code, _ := nodetest.Do(t, n, "GET", "/api/directory/GREET", ""); code != 200 {
		t.Fatalf("the row is gone after signed-out requests: %d", code)
	}
}

func TestConsoleSignInAndOut(t *testing.T) {
	n := startNode(t)
	c := newClient(t, n.URL())
	resp, body := c.do("GET", "/console/signin", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(body, `<label for="key">Owner key</label>`) {
		t.Fatalf("sign-in page: %d %s", resp.StatusCode, body)
	}
	resp, _ = c.do("POST", "/console/signin", url.Values{"key": {nodetest.Key}, "next": {"/console/receipts"}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/receipts" {
		t.Fatalf("sign-in: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	ck := sessionCookie(t, resp)
	if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/console" || ck.Secure || ck.MaxAge != 12*3600 || len(ck.Value) < 40 {
		t.Errorf("session cookie %+v: want HttpOnly, SameSite=Strict, Path=/console, not Secure over plain HTTP, Max-Age 12h, a long random id", ck)
	}
	if resp, _ := c.do("GET", "/console/health", nil, nil); resp.StatusCode != 200 {
		t.Fatalf("signed in, health: %d", resp.StatusCode)
	}
	tok := c.csrf("/console/")
	if resp, _ := c.do("POST", "/console/signout", url.Values{"csrf": {tok}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", resp.StatusCode)
	}
	// The old cookie, sent again by hand, names no session any more.
	again := newClient(t, n.URL())
	again.header.Set("Cookie", "capdir_console="+ck.Value)
	if resp, _ := again.do("GET", "/console/health", nil, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the signed-out session still serves: %d", resp.StatusCode)
	}
	// Where to go after signing in is a console path, never another site.
	for _, next := range []string{"//evil.example/", "https://evil.example/", "/console/\\evil", "/elsewhere"} {
		resp, _ := c.do("POST", "/console/signin", url.Values{"key": {nodetest.Key}, "next": {next}}, nil)
		if got := resp.Header.Get("Location"); got != "/console/" {
			t.Errorf("next %q: sent to %q, want /console/", next, got)
		}
	}
}

func sessionCookie(t *testing.T, resp *http.Response) *http.Cookie {
	t.Helper()
	for _, ck := range resp.Cookies() {
		if ck.Name == "capdir_console" {
			return ck
		}
	}
	t.Fatalf("no session cookie in %v", resp.Header["Set-Cookie"])
	return nil
}

func TestConsoleSessionCookieSecureOverTLS(t *testing.T) {
	n := startNode(t)
	srv := httptest.NewTLSServer(n.API.Handler())
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL)
	c.hc.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	resp, body := c.do("POST", "/console/signin", url.Values{"key": {nodetest.Key}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in over TLS: %d %s", resp.StatusCode, body)
	}
	if ck := sessionCookie(t, resp); !ck.Secure {
		t.Errorf("session cookie over TLS %+v: want Secure", ck)
	}
}

func TestConsoleWrongKeyIsTheAPIs401AndRateLimited(t *testing.T) {
	n := startNode(t)
	c := newClient(t, n.URL())
	for i, key := range []string{"wrong-key-0123456789", "", strings.Repeat("k", 1<<20), nodetest.Key + "x", "x"} {
		resp, body := c.do("POST", "/console/signin", url.Values{"key": {key}}, nil)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, `{&#34;error&#34;:&#34;unauthorized&#34;`) {
			t.Fatalf("wrong key %d: %d %s, want the API's 401 literal", i, resp.StatusCode, body)
		}
		if len(resp.Cookies()) != 0 {
			t.Fatalf("wrong key %d set a cookie: %v", i, resp.Cookies())
		}
	}
	// Past the limit even the right key is refused from that address, saying how long to wait.
	resp, body := c.do("POST", "/console/signin", url.Values{"key": {"wrong-key-0123456789"}}, nil)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("fifth wrong key: %d", resp.StatusCode)
	}
	resp, body = c.do("POST", "/console/signin", url.Values{"key": {nodetest.Key}}, nil)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "too_many_sign_ins") {
		t.Fatalf("after the limit: %d (Retry-After %q) %s, want 429", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	// Another address is not held back by this one's wrong keys.
	other := newClient(t, n.URL())
	other.hc.Transport = &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}
	other.signIn()
}

func TestConsoleChangeWithoutCSRFIsRefused(t *testing.T) {
	n := startNode(t)
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", greetRow); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	c := newClient(t, n.URL())
	c.signIn()
	tok := c.csrf("/console/")
	newRow := url.Values{"key": {"NEWROW"}, "type": {"fn"}, "target": {"echo"}, "content": {"# WHAT: x"}, "enabled": {"1"}}
	with := func(extra url.Values) url.Values {
		v := url.Values{}
		for k, vs := range newRow {
			v[k] = vs
		}
		for k, vs := range extra {
			v[k] = vs
		}
		return v
	}
	cases := []struct {
		name   string
		path   string
		form   url.Values
		header map[string]string
		want   int
	}{
		{"create, no token", "/console/rows", newRow, nil, 403},
		{"create, wrong token", "/console/rows", with(url.Values{"csrf": {tok + "x"}}), nil, 403},
		{"create, token in the query", "/console/rows?csrf=" + tok, newRow, nil, 403},
		{"create, another site", "/console/rows", with(url.Values{"csrf": {tok}}), map[string]string{"Origin": "https://evil.example"}, 403},
		{"create, a cross-site fetch", "/console/rows", with(url.Values{"csrf": {tok}}), map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"delete, no token", "/console/rows/GREET/delete", url.Values{"confirm": {"GREET"}}, nil, 403},
		{"disable, no token", "/console/rows/GREET/enabled", url.Values{"enabled": {"0"}}, nil, 403},
		{"mint, no token", "/console/tokens", url.Values{"sub": {"x"}, "keys": {"GREET"}, "risk": {"low"}}, nil, 403},
		{"sign out, no token", "/console/signout", url.Values{}, nil, 403},
	}
	for _, tc := range cases {
		resp, body := c.do("POST", tc.path, tc.form, tc.header)
		if resp.StatusCode != tc.want || !strings.Contains(body, "csrf_refused") {
			t.Errorf("%s: %d %s, want %d csrf_refused", tc.name, resp.StatusCode, body, tc.want)
		}
	}
	if code, _ := nodetest.Do(t, n, "GET", "/api/directory/NEWROW", ""); code != 404 {
		t.Errorf("a refused create wrote the row: %d", code)
	}
	if code, body := nodetest.Do(t, n, "GET", "/api/directory/GREET", ""); code != 200 || !strings.Contains(body, `"enabled":1`) {
		t.Errorf("a refused delete or disable changed the row: %d %s", code, body)
	}
	// The same change with the token (form field or header) is made.
	if resp, body := c.do("POST", "/console/rows", with(url.Values{"csrf": {tok}}), map[string]string{"Origin": n.URL()}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("create with the token: %d %s", resp.StatusCode, body)
	}
	if resp, body := c.do("POST", "/console/rows/GREET/enabled", url.Values{"enabled": {"0"}}, map[string]string{"X-CSRF-Token": tok}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("disable with the header: %d %s", resp.StatusCode, body)
	}
	if code, body := nodetest.Do(t, n, "GET", "/api/directory/GREET", ""); code != 200 || !strings.Contains(body, `"enabled":0`) {
		t.Errorf("disable with the token: %d %s", code, body)
	}
}

func TestConsoleHeadersOnEveryAnswer(t *testing.T) {
	n := startNode(t)
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", greetRow); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	c := newClient(t, n.URL())
	c.do("GET", "/console/signin", nil, nil)
	c.do("GET", "/console/static/console.js", nil, nil)
	c.do("GET", "/console/static/console.css", nil, nil)
	c.signIn()
	for _, p := range consolePages {
		c.do("GET", p, nil, nil) // check runs on each: CSP, frame and sniffing headers, no owner key
	}
	resp, body := c.do("GET", "/console/", nil, nil)
	if resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("directory page Cache-Control %q, want no-store", resp.Header.Get("Cache-Control"))
	}
	if strings.Contains(body, "<b>you</b>") || !strings.Contains(body, "&lt;b&gt;you&lt;/b&gt;") {
		t.Errorf("a row's description is not escaped: %s", body)
	}
	if strings.Contains(body, "style=") || strings.Contains(body, "<script>") || strings.Contains(body, "onclick") {
		t.Errorf("a page holds inline style or script, which the CSP refuses: %s", body)
	}
}
