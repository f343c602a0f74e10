package capdir_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/api"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

// The HTTP server's limits, over a real TCP listener with raw connections.

// rawSend dials the node and writes the request text as given (headers and as much
// of a body as the test wants sent). The connection's deadline is 5 s: no answer
// the tests wait for takes that long.
func rawSend(t *testing.T, n *capdir.Node, text string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(n.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, text); err != nil {
		t.Fatal(err)
	}
	return c, bufio.NewReader(c)
}

// readAnswer reads one response and its body from br.
func readAnswer(t *testing.T, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("answer body: %v", err)
	}
	return resp, string(b)
}

// closedByServer fails unless the server closes the connection (before the 5 s
// deadline).
func closedByServer(t *testing.T, br *bufio.Reader) {
	t.Helper()
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("the server kept the connection open: read %v", err)
	}
}

func ctlSeq(t *testing.T, n *capdir.Node) uint64 {
	t.Helper()
	seq, err := n.Log().LastSeq(context.Background(), wire.ControlStream)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// A request without the owner key is answered 401 at once, whatever its body: one
// that sent its headers and part of a body (declared length or chunked) is not
// waited for, and its connection is closed. Nothing is appended.
func TestHTTPUnkeyedPartialBodyIsRefusedAtOnce(t *testing.T) {
	n := nodetest.Start(t, nil) // the default read timeout, 30 s
	cases := []struct{ name, text string }{
		{"POST directory, declared length", "POST /api/directory HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 65536\r\n\r\n" + `{"key":"NOKEY","type":"fn","content":"` + strings.Repeat("a", 100)},
		{"PUT directory, 200 KB declared", "PUT /api/directory/NOKEY HTTP/1.1\r\nHost: localhost\r\nContent-Length: 200000\r\n\r\n{\"type\":"},
		{"import, chunked", "POST /api/directory/import HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n" + `{"key":"NOKEY","type":"fn"}`},
		{"dispatch, declared length", "POST /api/dispatch HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n" + `{"key":"NOKEY",`},
		{"dispatch, wrong key", "POST /api/dispatch HTTP/1.1\r\nHost: localhost\r\nx-terminal-key: wrong-key-0123456789\r\nContent-Length: 1000\r\n\r\n" + `{"key":"NOKEY",`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := ctlSeq(t, n)
			start := time.Now()
			_, br := rawSend(t, n, tc.text)
			resp, _ := readAnswer(t, br)
			if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
				t.Fatalf("HTTP %d, Connection: close %v; want 401 and close", resp.StatusCode, resp.Close)
			}
			closedByServer(t, br)
			if el := time.Since(start); el > 2*time.Second {
				t.Errorf("answered and closed after %v", el)
			}
			if ctlSeq(t, n) != before {
				t.Fatal("a refused request appended")
			}
		})
	}
}

// A client still sending its body when a refusal comes (here: all of it sent after
// the 401, in two writes) gets the answer and a clean close, not a reset that fails
// its next write with a broken pipe: the server reads and drops the rest for a
// moment before it closes the connection.
func TestHTTPRefusalDoesNotResetABodyStillArriving(t *testing.T) {
	n := nodetest.Start(t, nil)
	body := `{"key":"LATE","type":"fn","content":"` + strings.Repeat("a", 4000) + `"}`
	c, br := rawSend(t, n, fmt.Sprintf("POST /api/directory HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n\r\n", len(body)))
	resp, _ := readAnswer(t, br)
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Fatalf("HTTP %d, Connection: close %v; want 401 and close", resp.StatusCode, resp.Close)
	}
	for i, part := range []string{body[:len(body)/2], body[len(body)/2:]} {
		if _, err := io.WriteString(c, part); err != nil {
			t.Fatalf("sending part %d of the body after the answer: %v", i+1, err)
		}
	}
	// Read the connection itself: an EOF the reader met before the body was sent
	// would hide a reset.
	if br.Buffered() != 0 {
		t.Fatalf("%d bytes after the answer", br.Buffered())
	}
	if k, err := c.Read(make([]byte, 1)); k != 0 || err != io.EOF {
		t.Fatalf("after the rest of the body: read %d, %v; want a clean close (EOF)", k, err)
	}
}

// A client that stalls in the middle of its body, with the owner key, is cut off by
// the read timeout: 408, the connection closed, nothing appended (an NDJSON import
// keeps the rows it had read before the stall, and says so).
func TestHTTPReadTimeoutCutsStalledBody(t *testing.T) {
	const timeout = 400 * time.Millisecond
	n := nodetest.Start(t, func(c *capdir.Config) { c.HTTP.ReadTimeout = timeout })
	head := func(method, path string, length int) string {
		return fmt.Sprintf("%s %s HTTP/1.1\r\nHost: localhost\r\nx-terminal-key: %s\r\nContent-Length: %d\r\n\r\n", method, path, nodetest.Key, length)
	}
	cases := []struct {
		name, text, want string
		written          uint64
	}{
		{"POST directory", head("POST", "/api/directory", 1000) + `{"key":"SLOW","type":"fn",`,
			"request_timeout: the row stopped arriving before the server's read timeout", 0},
		{"dispatch", head("POST", "/api/dispatch", 1000) + `{"key":"SLOW",`,
			"request_timeout: the request body stopped arriving", 0},
		{"import, array", head("POST", "/api/directory/import", 1000) + `[{"key":"SLOW_A","type":"fn"},`,
			"request_timeout: the import body stopped arriving", 0},
		{"import, NDJSON", head("POST", "/api/directory/import", 1000) + `{"key":"SLOW_N","type":"fn"}` + "\n" + `{"key":`,
			"request_timeout: the import body stopped arriving before the server's read timeout (capdir serve --http-read-timeout); nothing more of it was read; send it without pauses; the rows before that point were imported", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := ctlSeq(t, n)
			start := time.Now()
			_, br := rawSend(t, n, tc.text)
			resp, body := readAnswer(t, br)
			var e struct {
				Error string
				OK    int
			}
			json.Unmarshal([]byte(body), &e)
			if resp.StatusCode != http.StatusRequestTimeout || !strings.HasPrefix(e.Error, tc.want) || e.OK != int(tc.written) {
				t.Fatalf("HTTP %d %s", resp.StatusCode, body)
			}
			if el := time.Since(start); el < timeout {
				t.Errorf("cut off after %v, before the read timeout", el)
			}
			closedByServer(t, br)
			if got := ctlSeq(t, n) - before; got != tc.written {
				t.Fatalf("appended %d events, want %d", got, tc.written)
			}
		})
	}
}

// An import's body may take longer than the read timeout as long as it does not
// stall for that long.
func TestHTTPImportOutlastsReadTimeoutWhileItFlows(t *testing.T) {
	const timeout, rows, gap = time.Second, 10, 150 * time.Millisecond
	n := nodetest.Start(t, func(c *capdir.Config) { c.HTTP.ReadTimeout = timeout })
	c, br := rawSend(t, n, fmt.Sprintf("POST /api/directory/import HTTP/1.1\r\nHost: localhost\r\nx-terminal-key: %s\r\nTransfer-Encoding: chunked\r\n\r\n", nodetest.Key))
	c.SetDeadline(time.Now().Add(rows*gap + 5*time.Second))
	tick := time.NewTicker(gap)
	defer tick.Stop()
	for i := range rows {
		<-tick.C
		line := fmt.Sprintf(`{"key":"FLOW_%d","type":"fn","target":"echo"}`+"\n", i)
		if _, err := fmt.Fprintf(c, "%x\r\n%s\r\n", len(line), line); err != nil {
			t.Fatal(err)
		}
	}
	io.WriteString(c, "0\r\n\r\n")
	resp, body := readAnswer(t, br)
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(body) != fmt.Sprintf(`{"ok":%d,"failed":[]}`, rows) {
		t.Fatalf("HTTP %d %s", resp.StatusCode, body)
	}
}

// A keep-alive connection left idle is closed after the idle timeout.
func TestHTTPIdleTimeoutClosesKeepAlive(t *testing.T) {
	n := nodetest.Start(t, func(c *capdir.Config) { c.HTTP.IdleTimeout = 300 * time.Millisecond })
	_, br := rawSend(t, n, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
	resp, _ := readAnswer(t, br)
	if resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("HTTP %d, Connection: close %v", resp.StatusCode, resp.Close)
	}
	closedByServer(t, br)
}

// Request headers over the cap are answered 431; a request under it is served.
func TestHTTPOversizedHeadersAre431(t *testing.T) {
	n := nodetest.Start(t, func(c *capdir.Config) { c.HTTP.MaxHeaderBytes = 2048 })
	_, br := rawSend(t, n, "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: "+strings.Repeat("b", 16<<10)+"\r\n\r\n")
	if resp, _ := readAnswer(t, br); resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("HTTP %d, want 431", resp.StatusCode)
	}
	_, br = rawSend(t, n, "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Small: "+strings.Repeat("s", 1000)+"\r\n\r\n")
	if resp, _ := readAnswer(t, br); resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d, want 200", resp.StatusCode)
	}
}

// The write timeout covers the handler, so it must exceed the dispatch wait: a
// dispatch that waits its full time must still deliver its 202.
func TestHTTPWriteTimeoutMustExceedDispatchWait(t *testing.T) {
	cfg := capdir.Config{TerminalKey: nodetest.Key, Log: eventlog.Config{DataDir: t.TempDir()}, HTTP: capdir.HTTPConfig{Addr: "127.0.0.1:0", WriteTimeout: 20 * time.Second}}
	_, err := capdir.Start(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "the HTTP write timeout (20s, --http-write-timeout) must exceed the dispatch wait (30s)") {
		t.Fatalf("start: %v", err)
	}
	if _, err := os.Stat(capdir.ProjectionPath(cfg.Log.DataDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused config opened the projection: %v", err)
	}
	if api.DefaultDispatchWait+capdir.HTTPWriteMargin <= api.DefaultDispatchWait {
		t.Fatal("the default write timeout does not exceed the dispatch wait")
	}
}
