package console_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/api/ownerkey"
	"github.com/capdir/capdir/eventlog/wire"
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
	srv := httptest.NewTLSServer(n.Handler())
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

// Behind a TLS proxy the node is reached over plain HTTP: a public URL of https
// makes the cookie Secure all the same, so a browser never sends it in clear.
func TestConsoleSessionCookieSecureBehindATLSProxy(t *testing.T) {
	n := nodetest.Start(t, func(c *capdir.Config) { c.API.PublicURL = "HTTPS://capdir.example.com" })
	c := newClient(t, n.URL())
	resp, body := c.do("POST", "/console/signin", url.Values{"key": {nodetest.Key}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d %s", resp.StatusCode, body)
	}
	if ck := sessionCookie(t, resp); !ck.Secure {
		t.Errorf("session cookie under an https public URL %+v: want Secure", ck)
	}
	if resp, _ := c.do("POST", "/console/signout", url.Values{"csrf": {c.csrf("/console/")}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", resp.StatusCode)
	} else {
		var last *http.Cookie
		for _, ck := range resp.Cookies() {
			if ck.Name == "capdir_console" {
				if last = ck; !ck.Secure {
					t.Errorf("a sign-out's cookie %+v: want Secure too", ck)
				}
			}
		}
		if last == nil || last.MaxAge >= 0 {
			t.Errorf("sign-out: the last session cookie %+v, want an expired one", last)
		}
	}
}

func TestConsoleWrongKeyIsTheAPIs401AndRateLimited(t *testing.T) {
	n := startNode(t)
	c := newClient(t, n.URL())
	keys := []string{"wrong-key-0123456789", "", strings.Repeat("k", 1<<20), nodetest.Key + "x", "x"} // the empty one is not counted
	for len(keys) < ownerkey.DefaultLimit+1 {
		keys = append(keys, "wrong-key-0123456789")
	}
	for i, key := range keys {
		resp, body := c.do("POST", "/console/signin", url.Values{"key": {key}}, nil)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, `{&#34;error&#34;:&#34;unauthorized&#34;`) {
			t.Fatalf("wrong key %d: %d %s, want the API's 401 literal", i, resp.StatusCode, body)
		}
		if len(resp.Cookies()) != 0 {
			t.Fatalf("wrong key %d set a cookie: %v", i, resp.Cookies())
		}
	}
	// Past the limit even the right key is refused from that address, saying how long to wait.
	resp, body := c.do("POST", "/console/signin", url.Values{"key": {nodetest.Key}}, nil)
	want := regexp.MustCompile(regexp.QuoteMeta(html.EscapeString(`{"error":"too_many_sign_ins","how_to_fix":"10 wrong keys from this address within 1m0s: wait `)) +
		`1m[01]s` + regexp.QuoteMeta(html.EscapeString(`, then sign in with the owner key"}`)))
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !want.MatchString(body) {
		t.Fatalf("after the limit: %d (Retry-After %q) %s, want 429 %s", resp.StatusCode, resp.Header.Get("Retry-After"), body, want)
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
	if resp, _ := c.do("GET", "/console", nil, nil); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/" {
		t.Errorf("GET /console: %d to %q, want 303 to /console/", resp.StatusCode, resp.Header.Get("Location"))
	}
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

// A row written from the form that cannot run as written is saved, and the
// notice names the literal every call of it will fail with.
func TestConsoleWriteShowsItsWarning(t *testing.T) {
	n := startNode(t)
	c := newClient(t, n.URL())
	c.signIn()
	form := url.Values{"csrf": {c.csrf("/console/rows/new")}, "key": {"LATER"}, "type": {"fn"}, "target": {"deployed_tomorrow"},
		"content": {"# WHAT: a function the next deploy brings"}, "enabled": {"1"}}
	resp, body := c.do("POST", "/console/rows", form, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/rows/LATER" {
		t.Fatalf("create: %d %s", resp.StatusCode, body)
	}
	_, page := c.do("GET", "/console/rows/LATER", nil, nil)
	if want := `id="notice">Created LATER. It cannot run as written: every call of it will fail with ERR:fn:unknown_target:deployed_tomorrow.</p>`; !strings.Contains(page, want) {
		t.Fatalf("the row page after the write does not show %s:\n%s", want, page)
	}
}

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// A session ends 12 hours after its last request; an address refused for wrong
// keys may sign in again once the window has passed.
func TestConsoleSessionsAndRefusalsExpire(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	n := nodetest.Start(t, nil, capdir.WithClock(clock.Now))
	c := newClient(t, n.URL())
	c.signIn()
	clock.advance(12*time.Hour - time.Minute)
	if resp, _ := c.do("GET", "/console/health", nil, nil); resp.StatusCode != 200 {
		t.Fatalf("11h59m idle: %d, want the page", resp.StatusCode)
	}
	clock.advance(12*time.Hour - time.Minute) // idle as long again since that request
	if resp, _ := c.do("GET", "/console/health", nil, nil); resp.StatusCode != 200 {
		t.Fatalf("a request renews the session: %d", resp.StatusCode)
	}
	clock.advance(12*time.Hour + time.Second)
	if resp, _ := c.do("GET", "/console/health", nil, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("12h idle: %d, want sent to sign in", resp.StatusCode)
	}

	for range ownerkey.DefaultLimit {
		c.do("POST", "/console/signin", url.Values{"key": {"wrong-key-0123456789"}}, nil)
	}
	if resp, _ := c.do("POST", "/console/signin", url.Values{"key": {nodetest.Key}}, nil); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("after %d wrong keys: %d, want 429", ownerkey.DefaultLimit, resp.StatusCode)
	}
	clock.advance(time.Minute)
	c.signIn()
}

// Hostile or malformed input to every signed-in entry point gets the API's
// literal for it, and changes nothing.
func TestConsoleRefusesHostileInput(t *testing.T) {
	n := startNode(t)
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", greetRow); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	c := newClient(t, n.URL())
	c.signIn()
	tok := c.csrf("/console/")
	before := lastSeqs(t, n)
	form := func(kv ...string) url.Values {
		v := url.Values{"csrf": {tok}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return v
	}
	for _, tc := range []struct {
		method, path string
		form         url.Values
		status       int
		literal      string
	}{
		{"GET", "/console/?type=zzz", nil, 400, "type must be one of"},
		{"GET", "/console/?enabled=2", nil, 400, "enabled must be 0 or 1"},
		{"GET", "/console/?ask=" + url.QueryEscape(strings.Repeat("word ", 200)), nil, 400, "bad query parameter"},
		{"GET", "/console/rows/bad.key", nil, 400, "key"},
		{"GET", "/console/rows/NOPE", nil, 404, `"error":"not_found"`},
		{"GET", "/console/receipts?since=forever", nil, 400, "since must be a number of minutes"},
		{"GET", "/console/receipts/not-an-id", nil, 400, "inv_"},
		{"GET", "/console/receipts/inv_nope", nil, 404, "not_found"},
		{"POST", "/console/rows", form("key", "X<script>", "type", "fn"), 400, "key"},
		{"POST", "/console/rows", form("key", "GREET", "type", "fn", "target", "echo"), 409, "exists"},
		{"POST", "/console/rows", form("key", "BIG", "type", "fn", "content", strings.Repeat("x", 2<<20)), 413, "payload_too_large"},
		{"POST", "/console/rows", form("key", "RANK", "type", "fn", "planner_rank", "high"), 400, "planner_rank"},
		{"POST", "/console/rows/NOPE/enabled", form("enabled", "0"), 404, "not_found"},
		{"POST", "/console/rows/GREET/enabled", form("enabled", "yes"), 400, "enabled must be 0 or 1"},
		{"POST", "/console/rows/GREET/delete", form("confirm", "OTHER"), 400, "type the row's key to confirm"},
		{"POST", "/console/approvals/inv_nope", form("decision", "approve"), 404, "not_found"},
		{"POST", "/console/approvals/inv_nope", form("decision", "maybe"), 400, "bad_decision"},
		{"POST", "/console/breakers/NOPE/reset", form(), 404, "not_found"},
		{"POST", "/console/breakers/bad.key/reset", form(), 400, "key"},
		{"POST", "/console/tokens", form("sub", "x", "risk", "low"), 400, "scope"},
		{"POST", "/console/tokens", form("sub", "x", "keys", "GREET", "ttl_seconds", "soon"), 400, "ttl_seconds must be a whole number"},
		{"POST", "/console/tokens/revoke", form("jti", "bad jti!"), 400, "is not a token id"},
	} {
		resp, body := c.do(tc.method, tc.path, tc.form, nil)
		if resp.StatusCode != tc.status || !strings.Contains(html.UnescapeString(body), tc.literal) {
			t.Errorf("%s %s: %d, want %d with %q in\n%s", tc.method, tc.path, resp.StatusCode, tc.status, tc.literal, body)
		}
	}
	if after := lastSeqs(t, n); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("refused requests appended to the log: %v -> %v", before, after)
	}
}

// lastSeqs is each stream's last sequence in n's log.
func lastSeqs(t *testing.T, n *capdir.Node) map[string]uint64 {
	t.Helper()
	m := map[string]uint64{}
	for _, s := range wire.Streams {
		seq, err := n.Log().LastSeq(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		m[s] = seq
	}
	return m
}

// TestConsoleLiveStreamEndsWithItsSession: a live stream opened by a session
// ends once the session has (signed out, or idled out), instead of telling
// whoever holds it of every change from then on.
func TestConsoleLiveStreamEndsWithItsSession(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	n := nodetest.Start(t, nil, capdir.WithClock(clock.Now))
	for i, end := range []func(c *client){
		func(c *client) { c.do("POST", "/console/signout", url.Values{"csrf": {c.csrf("/console/")}}, nil) },
		func(*client) { clock.advance(12*time.Hour + time.Second) },
	} {
		c := newClient(t, n.URL())
		c.signIn()
		req, err := http.NewRequest("GET", n.URL()+"/console/events?topics=rows", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.hc.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("stream: %v %v", err, resp)
		}
		defer resp.Body.Close()
		lines := bufio.NewReader(resp.Body)
		if l, err := lines.ReadString('\n'); err != nil || l != ": live\n" {
			t.Fatalf("stream opens with %q %v", l, err)
		}
		end(c)
		row := fmt.Sprintf(`{"key":"ROW%d","type":"fn","target":"echo","content":"# WHAT: a row\n[\"$1\"]"}`, i)
		if code, body := nodetest.Do(t, n, "POST", "/api/directory", row); code != 201 {
			t.Fatalf("create: %d %s", code, body)
		}
		for {
			l, err := lines.ReadString('\n')
			if strings.HasPrefix(l, "event:") || strings.HasPrefix(l, "data:") {
				t.Fatalf("case %d: the ended session's stream goes on: %q", i, l)
			}
			if err != nil {
				break // the stream ended
			}
		}
	}
}

// TestConsoleLiveStreamCatchesAChangeBeforeItOpened: a page carries the count of
// live notices it was rendered at; a stream opened with that count after a change
// came (between the render and the subscription) is told of it at once, and one
// opened with the current count is not.
func TestConsoleLiveStreamCatchesAChangeBeforeItOpened(t *testing.T) {
	n := startNode(t)
	c := newClient(t, n.URL())
	c.signIn()
	since := func() string {
		_, page := c.do("GET", "/console/", nil, nil)
		m := regexp.MustCompile(`<body data-live-since="(\d+)">`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("the page carries no data-live-since:\n%.400s", page)
		}
		return m[1]
	}
	open := func(since string) *bufio.Reader {
		req, err := http.NewRequest("GET", n.URL()+"/console/events?topics=rows&since="+since, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.hc.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("stream: %v %v", err, resp)
		}
		t.Cleanup(func() { resp.Body.Close() })
		lines := bufio.NewReader(resp.Body)
		if l, err := lines.ReadString('\n'); err != nil || l != ": live\n" {
			t.Fatalf("stream opens with %q %v", l, err)
		}
		lines.ReadString('\n') // the blank line ending the comment
		return lines
	}
	rendered := since()
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"LATE","type":"fn","target":"echo","content":"# WHAT: a row\n[\"$1\"]"}`); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	if err := nodetest.CatchUp(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	if l, err := open(rendered).ReadString('\n'); err != nil || l != "event: change\n" {
		t.Fatalf("a stream opened after a change since its page: first line %q %v, want the change at once", l, err)
	}
	// Opened with the current count, the first line is the next change's.
	current := open(since())
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"NEXT","type":"fn","target":"echo","content":"# WHAT: a row\n[\"$1\"]"}`); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	l1, _ := current.ReadString('\n')
	l2, _ := current.ReadString('\n')
	if l1 != "event: change\n" || l2 != "data: rows\n" {
		t.Fatalf("a current stream's first event: %q %q, want the next change of rows", l1, l2)
	}
}

// A signed-out request for a page is sent to sign in with its URL as next= only
// up to 2 KiB, and the sign-in page, its form and the redirect after it carry a
// next= only so long: both were quoted whole (escaped in the Location and again
// in the redirect's body, HTML-escaped in the page), so a URL of 900 KiB sent
// by anyone made an answer five to six times its size, held whole by a
// connection that does not read it. A longer one goes to /console/.
func TestConsoleSignInNextIsBounded(t *testing.T) {
	n := startNode(t)
	c := newClient(t, n.URL())
	long := "/console/receipts?key=" + strings.Repeat("'", 900<<10)
	resp, body := c.do("GET", long, nil, nil)
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/console/signin?next=%2Fconsole%2F" || len(body) > 4<<10 {
		t.Errorf("GET a page by a URL of %d bytes: %d to %.80q, a body of %d bytes; want 303 to /console/signin?next=%%2Fconsole%%2F, at most 4 KiB",
			len(long), resp.StatusCode, loc, len(body))
	}
	resp, body = c.do("GET", "/console/signin?next="+long, nil, nil)
	if resp.StatusCode != http.StatusOK || len(body) > 16<<10 || !strings.Contains(body, `name="next" value="/console/"`) {
		t.Errorf("the sign-in page with a next= of %d bytes: %d, %d bytes; want 200 carrying next=/console/, at most 16 KiB", len(long), resp.StatusCode, len(body))
	}
	resp, _ = c.do("POST", "/console/signin", url.Values{"key": {nodetest.Key}, "next": {"/console/receipts?key=" + strings.Repeat("A", 4<<10)}}, nil)
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/console/" {
		t.Errorf("signing in with a next= of 4 KiB: %d to %.80q; want 303 to /console/", resp.StatusCode, loc)
	}
	kept := "/console/receipts?key=" + strings.Repeat("A", 1<<10)
	resp, _ = c.do("POST", "/console/signin", url.Values{"key": {nodetest.Key}, "next": {kept}}, nil)
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != kept {
		t.Errorf("signing in with a next= of 1 KiB: %d to %.80q; want 303 to it", resp.StatusCode, loc)
	}
}

// The console's static files are served whole, whatever Range asks: they are a
// few KiB, and a request for thousands of one-byte ranges of one was answered,
// to anyone, with a part and its headers for each, some 35 times the request's
// size.
func TestConsoleStaticFilesIgnoreRanges(t *testing.T) {
	n := startNode(t)
	c := newClient(t, n.URL())
	resp, whole := c.do("GET", "/console/static/console.css", nil, nil)
	if resp.StatusCode != http.StatusOK || len(whole) < 1<<10 {
		t.Fatalf("GET console.css: %d, %d bytes", resp.StatusCode, len(whole))
	}
	ranges := "bytes=" + strings.TrimSuffix(strings.Repeat("0-0,", len(whole)-1), ",")
	for _, rng := range []string{ranges, "bytes=0-0"} {
		resp, body := c.do("GET", "/console/static/console.css", nil, map[string]string{"Range": rng})
		if resp.StatusCode != http.StatusOK || body != whole {
			t.Errorf("GET console.css with Range %.20s… (%d bytes): %d, %d bytes; want 200 and the file whole (%d bytes)",
				rng, len(rng), resp.StatusCode, len(body), len(whole))
		}
	}
}
