package api_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/api/ownerkey"
	"github.com/capdir/capdir/internal/nodetest"
)

const wrongKey = "not-the-owner-key-0123456789"

// fromAddr sends a request to n from the loopback source address src (Linux
// routes all of 127.0.0.0/8 to lo), with key as x-terminal-key: the status, the
// Retry-After header and the body.
func fromAddr(t *testing.T, n *capdir.Node, src, method, path, body, key string) (int, string, string) {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}}}
	defer c.CloseIdleConnections()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, n.URL()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("x-terminal-key", key)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s from %s: %v", method, path, src, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), strings.TrimSpace(string(b))
}

// Wrong owner keys from one address are answered 401 up to the limit, then 429
// with a literal that says how long to wait, on every route that takes the key
// (owner routes, dispatch, /mcp): the key is not compared then, so even the
// right one is refused from that address; the owner's key from another address
// is not; and once the window passes the address may try again.
func TestWrongOwnerKeysFromOneAddressAreThrottled(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	n := nodetest.Start(t, nil, capdir.WithClock(clock))
	before := nodetest.ControlSeq(t, n)
	const attacker, owner = "127.0.0.7", "127.0.0.8"

	for i := 0; i < ownerkey.DefaultLimit; i++ {
		if code, _, body := fromAddr(t, n, attacker, "GET", "/api/directory", "", wrongKey); code != 401 {
			t.Fatalf("wrong key %d: %d %s; want 401", i+1, code, body)
		}
	}
	want := `{"error":"too_many_wrong_keys","how_to_fix":"10 wrong owner keys from this address within 1m0s: wait 1m1s, then send the owner key ` +
		`in the x-terminal-key header (check CAPDIR_TERMINAL_KEY, --key-file or the data dir's terminal.key)"}`
	for _, r := range []struct{ method, path, body, key string }{
		{"GET", "/api/directory", "", wrongKey},
		{"GET", "/api/directory", "", nodetest.Key}, // not compared: the right key learns nothing either
		{"POST", "/api/directory", `{"key":"A","type":"fn","target":"echo"}`, nodetest.Key},
		{"POST", "/api/dispatch", `{"key":"A","body":""}`, wrongKey},
		{"GET", "/api/receipts?key=A", "", wrongKey},
		{"PUT", "/api/upstreams/u", `{"url":"http://127.0.0.1:1/mcp"}`, nodetest.Key},
		{"POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, wrongKey},
	} {
		code, retry, body := fromAddr(t, n, attacker, r.method, r.path, r.body, r.key)
		if code != 429 || retry != "61" || body != want {
			t.Errorf("%s %s from the throttled address: %d (Retry-After %q) %s; want 429 (61) %s", r.method, r.path, code, retry, body, want)
		}
	}
	if code, _, body := fromAddr(t, n, owner, "GET", "/api/directory", "", nodetest.Key); code != 200 {
		t.Fatalf("the owner from another address: %d %s; want 200", code, body)
	}
	if code, _, body := fromAddr(t, n, attacker, "GET", "/api/directory", "", ""); code != 401 {
		t.Fatalf("no key from the throttled address: %d %s; want the 401 that names the header", code, body)
	}
	if code, _ := nodetest.Do(t, n, "GET", "/api/directory/A", ""); code != 404 {
		t.Fatalf("a throttled request wrote a row: GET /api/directory/A is %d", code)
	}
	if after := nodetest.ControlSeq(t, n); after != before {
		t.Fatalf("the throttled requests appended to the control stream: %d -> %d", before, after)
	}
	now.Add(int64(time.Minute))
	if code, _, body := fromAddr(t, n, attacker, "GET", "/api/directory", "", nodetest.Key); code != 200 {
		t.Fatalf("after the window: %d %s; want 200", code, body)
	}
}

// ClientAddr counts an IPv6 host by its /64 and never believes X-Forwarded-For.
func TestOwnerKeyClientAddr(t *testing.T) {
	for _, c := range []struct{ remote, xff, want string }{
		{"192.0.2.1:5000", "", "192.0.2.1"},
		{"192.0.2.1:5000", "198.51.100.9", "192.0.2.1"},
		{"[2001:db8:1:2:3:4:5:6]:443", "", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff::1]:443", "", "2001:db8:1:2::/64"},
		{"[::ffff:192.0.2.1]:80", "", "192.0.2.1"},
	} {
		r := &http.Request{RemoteAddr: c.remote, Header: http.Header{}}
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := ownerkey.ClientAddr(r); got != c.want {
			t.Errorf("ClientAddr(%s, xff %q) = %q; want %q", c.remote, c.xff, got, c.want)
		}
	}
}
