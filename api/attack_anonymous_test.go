package api_test

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/internal/nodetest"
)

// rawAnswer is one answer to a request sent byte for byte, as no client would
// build it: its status, headers and body, and its whole size on the wire.
type rawAnswer struct {
	status int
	header http.Header
	body   string
	size   int
}

// sendRaw writes the request line target, the Host localhost (unless extra
// names one) and the extra header lines to n over a connection of its own, and
// reads the answer whole.
func sendRaw(t *testing.T, n *capdir.Node, target string, extra ...string) rawAnswer {
	t.Helper()
	u, err := url.Parse(n.URL())
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := "GET " + target + " HTTP/1.1\r\nConnection: close\r\n"
	if !slices.ContainsFunc(extra, func(h string) bool { return strings.HasPrefix(h, "Host:") }) {
		req += "Host: localhost\r\n"
	}
	for _, h := range extra {
		req += h + "\r\n"
	}
	go io.WriteString(c, req+"\r\n") // the answer may come before the request is all read
	cr := &countingReader{r: c}
	resp, err := http.ReadResponse(bufio.NewReader(cr), nil)
	if err != nil {
		t.Fatalf("GET %.60s…: %v", target, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("GET %.60s…: %v", target, err)
	}
	return rawAnswer{status: resp.StatusCode, header: resp.Header, body: string(b), size: cr.n}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// hostile is c repeated to about 900 KiB, within the default header cap (1 MiB).
func hostile(c string) string { return strings.Repeat(c, (900<<10)/len(c)) }

// A request no route serves is answered with its path cut to 256 bytes, and one
// under a Host a loopback listener does not answer with its Host cut so: both
// were quoted back whole, so a path of 900 KiB of control characters, each
// escaped in six bytes of JSON, made an answer of 1.8 MiB, held whole by a
// connection that does not read it. Nothing is appended.
func TestAnswersToAnyoneQuoteTheRequestClipped(t *testing.T) {
	n := nodetest.Start(t, nil)
	before, beforeData := nodetest.ControlSeq(t, n), dataSeq(t, n)
	for _, target := range []string{"/x" + hostile("%01"), "/x" + hostile("<"), "/receipt/x/" + hostile("'")} {
		a := sendRaw(t, n, target)
		path, _ := url.PathUnescape(target)
		if a.status != 404 || a.size > 4<<10 || !strings.Contains(a.body, `"path":"`+strings.ReplaceAll(path[:20], "\x01", `\u0001`)) ||
			!strings.Contains(a.body, `…"}`) {
			t.Errorf("GET %.40s… (%d bytes): %d, %d bytes: %.200s; want 404 naming the path cut, at most 4 KiB", target, len(target), a.status, a.size, a.body)
		}
	}
	a := sendRaw(t, n, "/healthz", "Host: evil."+hostile("a")+".example")
	if a.status != 403 || a.size > 4<<10 || !strings.Contains(a.body, `"host":"evil.aaaa`) || !strings.Contains(a.body, `…"`) {
		t.Errorf("a Host of 900 KiB: %d, %d bytes: %.200s; want 403 naming the host cut, at most 4 KiB", a.status, a.size, a.body)
	}
	if nodetest.ControlSeq(t, n) != before || dataSeq(t, n) != beforeData {
		t.Fatal("a request no route serves appended to the log")
	}
}

// A path the mux cleans is redirected to its clean form escaped once, with no
// body: the mux's own redirect escaped the path's escapes again (/a//%41 went to
// /a/%2541, another path) and repeated the Location in an HTML body, so a path
// of 900 KiB of '<' sent by anyone made an answer of 9 MiB (a 10th of it held
// per connection that does not read it). A cleaned path longer than any route's
// is no route's: 404, its path clipped.
func TestCleanedPathRedirectIsNotAnAmplifier(t *testing.T) {
	n := nodetest.Start(t, nil)
	for _, c := range []struct{ target, location string }{
		{"/api//directory", "/api/directory"},
		{"/api//directory/%41", "/api/directory/%41"},
		{"/a/../receipt/inv_x?confirm=%20y", "/receipt/inv_x?confirm=%20y"},
		{"/console/./signin", "/console/signin"},
	} {
		a := sendRaw(t, n, c.target)
		if a.status != http.StatusTemporaryRedirect || a.header.Get("Location") != c.location || a.body != "" {
			t.Errorf("GET %s: %d Location %q body %q; want 307 to %s, no body", c.target, a.status, a.header.Get("Location"), a.body, c.location)
		}
	}
	for _, target := range []string{"/a/../receipt/" + hostile("<"), "/console/../" + hostile("%01"), "/x/./" + hostile("'")} {
		a := sendRaw(t, n, target)
		if a.size > 4<<10 {
			t.Errorf("GET %.40s… (%d bytes): a %d answer of %d bytes; want at most 4 KiB", target, len(target), a.status, a.size)
		}
	}
}

// A read that answers before the projection caught up logs the route it
// served, cut as a 404 quotes a path: the warning quoted the path whole, so
// while the projection lagged, each GET /receipt/{id} of a 900 KiB id sent by
// anyone wrote 900 KiB to the node's log. (A wait of 1ns stands in for a lag:
// every settle gives up.)
func TestLaggingReadLogsTheRouteClipped(t *testing.T) {
	var logs nodetest.Buffer
	n := nodetest.Start(t, func(c *capdir.Config) { c.Projector.Wait = time.Nanosecond },
		capdir.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	before := len(logs.Bytes())
	for _, target := range []string{"/receipt/inv_" + hostile("a"), "/api/dispatch?confirm=inv_" + hostile("a")} {
		if a := sendRaw(t, n, target); a.status != 404 || a.size > 4<<10 {
			t.Fatalf("GET %.40s…: %d, %d bytes; want a 404 of at most 4 KiB", target, a.status, a.size)
		}
	}
	logged := logs.Bytes()[before:]
	if !bytes.Contains(logged, []byte("api: read answered before the projection caught up")) {
		t.Fatalf("no warning of a read answered before the projection caught up: %.300s", logged)
	}
	if len(logged) > 8<<10 {
		t.Errorf("two reads of a 900 KiB id logged %d bytes: %.300s…; want at most 8 KiB", len(logged), logged)
	}
}
