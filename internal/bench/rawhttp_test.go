package bench

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdir/capdir/internal/allocstest"
)

// echoAnswer is what the node answers to a successful echo invocation, in part.
const echoAnswer = `{"ok":true,"result":"` + EchoBody + `"}`

// rawServer starts a test server running h and counts the connections it accepts
// and closes.
type rawServer struct {
	*httptest.Server
	accepted, closed atomic.Int64
}

func startRawServer(t *testing.T, h http.HandlerFunc) *rawServer {
	t.Helper()
	s := &rawServer{Server: httptest.NewUnstartedServer(h)}
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			s.accepted.Add(1)
		case http.StateClosed, http.StateHijacked:
			s.closed.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func newTestRawClient(t *testing.T, s *rawServer) *rawClient {
	t.Helper()
	c, err := newRawClient(s.URL, "/api/dispatch", TerminalKey, dispatchBody(), 16)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	return c
}

func echoHandler(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, echoAnswer)
}

// eventually waits up to a second for cond, which server-side bookkeeping
// (ConnState) may reach only after the client has its answer.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRawClientReusesConnection(t *testing.T) {
	s := startRawServer(t, echoHandler)
	c := newTestRawClient(t, s)
	op := rawInvoke(c)
	ctx := context.Background()
	for i := range 200 {
		if err := op(ctx, i); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if n := s.accepted.Load(); n != 1 {
		t.Fatalf("200 sequential calls used %d connections, want 1", n)
	}
	if n := s.closed.Load(); n != 0 {
		t.Fatalf("%d connections closed during keep-alive calls, want 0", n)
	}

	// Concurrent callers each hold at most one connection, and reuse it.
	lat, _, err := Drive(ctx, 2000, 4, 0, op)
	if err != nil {
		t.Fatal(err)
	}
	if len(lat) != 2000 {
		t.Fatalf("completed %d calls, want 2000", len(lat))
	}
	if n := s.accepted.Load(); n > 4 {
		t.Fatalf("4 callers opened %d connections in all, want at most 4", n)
	}

	// close closes the pooled connections; later calls fail.
	c.close()
	eventually(t, "the server to see every connection closed", func() bool { return s.closed.Load() == s.accepted.Load() })
	if err := op(ctx, 0); err == nil {
		t.Fatal("call after close succeeded")
	}
}

func TestRawClientNon200(t *testing.T) {
	s := startRawServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"no such row"}`, http.StatusNotFound)
	})
	c := newTestRawClient(t, s)
	err := rawInvoke(c)(context.Background(), 7)
	if err == nil {
		t.Fatal("a 404 answer was not an error")
	}
	if !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "no such row") {
		t.Fatalf("error %q does not name the status and the answer", err)
	}
	// The connection is not kept after an error.
	eventually(t, "the connection to be closed", func() bool { return s.closed.Load() == 1 })
	if len(c.idle) != 0 {
		t.Fatalf("%d connections pooled after an error", len(c.idle))
	}
}

func TestRawClientUnexpectedAnswer(t *testing.T) {
	s := startRawServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"ok":true,"result":"something else"}`)
	})
	c := newTestRawClient(t, s)
	if err := rawInvoke(c)(context.Background(), 0); err == nil || !strings.Contains(err.Error(), "something else") {
		t.Fatalf("a 200 without the echoed result gave error %v", err)
	}
}

func TestRawClientNeedsContentLength(t *testing.T) {
	t.Run("chunked", func(t *testing.T) {
		s := startRawServer(t, func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"ok":true,`)
			w.(http.Flusher).Flush() // forces Transfer-Encoding: chunked
			io.WriteString(w, `"result":"`+EchoBody+`"}`)
		})
		c := newTestRawClient(t, s)
		err := rawInvoke(c)(context.Background(), 0)
		if err == nil || !strings.Contains(err.Error(), "Transfer-Encoding") {
			t.Fatalf("chunked answer gave error %v", err)
		}
		if len(c.idle) != 0 {
			t.Fatal("connection pooled after a chunked answer")
		}
	})
	t.Run("until EOF", func(t *testing.T) {
		s := startRawServer(t, func(w http.ResponseWriter, r *http.Request) {
			conn, bw, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n" + echoAnswer)
			bw.Flush()
		})
		c := newTestRawClient(t, s)
		err := rawInvoke(c)(context.Background(), 0)
		if err == nil || !strings.Contains(err.Error(), "without Content-Length") {
			t.Fatalf("answer without Content-Length gave error %v", err)
		}
	})
}

func TestRawClientConnectionClose(t *testing.T) {
	s := startRawServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		echoHandler(w, r)
	})
	c := newTestRawClient(t, s)
	op := rawInvoke(c)
	for i := range 5 {
		if err := op(context.Background(), i); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if len(c.idle) != 0 {
			t.Fatalf("call %d: connection pooled after Connection: close", i)
		}
	}
	if n := s.accepted.Load(); n != 5 {
		t.Fatalf("5 calls answered with Connection: close used %d connections, want 5", n)
	}
}

func TestRawClientRequest(t *testing.T) {
	type seen struct {
		proto, method, path, host, key, contentType string
		length                                      int64
		body                                        []byte
	}
	var mu sync.Mutex
	var got []seen
	s := startRawServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		got = append(got, seen{r.Proto, r.Method, r.URL.Path, r.Host, r.Header.Get("x-terminal-key"),
			r.Header.Get("Content-Type"), r.ContentLength, b})
		mu.Unlock()
		echoHandler(w, r)
	})
	c := newTestRawClient(t, s)
	op := rawInvoke(c)
	for i := range 3 {
		if err := op(context.Background(), i); err != nil {
			t.Fatal(err)
		}
	}
	want := dispatchBody()
	if !bytes.Equal(want, []byte(`{"body":"`+EchoBody+`","key":"`+EchoKey+`"}`)) {
		t.Fatalf("dispatch body is %s", want)
	}
	host := strings.TrimPrefix(s.URL, "http://")
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 {
		t.Fatalf("server saw %d requests, want 3", len(got))
	}
	for i, r := range got {
		if r.proto != "HTTP/1.1" || r.method != "POST" || r.path != "/api/dispatch" || r.host != host ||
			r.key != TerminalKey || r.contentType != "application/json" || r.length != int64(len(want)) || !bytes.Equal(r.body, want) {
			t.Errorf("request %d: %+v (body %s)", i, r, r.body)
		}
	}
}

func TestRawClientDeadline(t *testing.T) {
	release := make(chan struct{})
	s := startRawServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	c := newTestRawClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := rawInvoke(c)(ctx, 0)
	if err != context.DeadlineExceeded {
		t.Fatalf("call past its context's deadline gave %v, want context.DeadlineExceeded", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("call took %v past a 50ms deadline", el)
	}
	if err := rawInvoke(c)(ctx, 1); err != context.DeadlineExceeded {
		t.Fatalf("call with an expired context gave %v", err)
	}
}

func TestNewRawClientAddress(t *testing.T) {
	c, err := newRawClient("http://127.0.0.1:8080", "/p", "k", []byte("{}"), 1)
	if err != nil {
		t.Fatal(err)
	}
	if c.addr != "127.0.0.1:8080" {
		t.Fatalf("addr %q", c.addr)
	}
	wantReq := "POST /p HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nx-terminal-key: k\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
	if string(c.req) != wantReq {
		t.Fatalf("request %q, want %q", c.req, wantReq)
	}
	for _, bad := range []string{"https://127.0.0.1:1", "127.0.0.1:1", "http://"} {
		if _, err := newRawClient(bad, "/p", "k", nil, 1); err == nil {
			t.Errorf("newRawClient(%q) succeeded", bad)
		}
	}
}

// TestRawClientAllocs holds the client to no allocations per call once its
// connection is open, against a server that allocates none either.
func TestRawClientAllocs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(echoAnswer)) + "\r\n\r\n" + echoAnswer)
	reqBody := dispatchBody()
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		br := bufio.NewReader(nc)
		body := make([]byte, len(reqBody))
		for {
			for { // the request line and headers, up to the blank line
				l, err := br.ReadSlice('\n')
				if err != nil {
					return
				}
				if len(l) == 2 {
					break
				}
			}
			if _, err := io.ReadFull(br, body); err != nil {
				return
			}
			if _, err := nc.Write(resp); err != nil {
				return
			}
		}
	}()
	c, err := newRawClient("http://"+ln.Addr().String(), "/api/dispatch", TerminalKey, reqBody, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	op := rawInvoke(c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := op(ctx, 0); err != nil { // dials
		t.Fatal(err)
	}
	n := allocstest.PerRun(t, 500, func() {
		if err := op(ctx, 1); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations per call, want 0", n)
	}
}

// TestEnvRawHTTPInvoke drives a real node with the lean client: its answers to
// POST /api/dispatch carry a Content-Length, the connection is kept, and Close
// closes it.
func TestEnvRawHTTPInvoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a node")
	}
	ctx := context.Background()
	e, err := StartEnv(ctx, EnvConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	op := e.RawHTTPInvoke()
	lat, _, err := Drive(ctx, 400, 4, 0, op)
	if err != nil {
		t.Fatal(err)
	}
	if len(lat) != 400 {
		t.Fatalf("completed %d calls, want 400", len(lat))
	}
	if err := e.HTTPInvoke()(ctx, 0); err != nil {
		t.Fatal(err)
	}
	e.rawMu.Lock()
	open := len(e.raw.conns)
	e.rawMu.Unlock()
	if open == 0 || open > 4 {
		t.Fatalf("4 callers left %d connections open, want 1 to 4", open)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := op(ctx, 0); err == nil {
		t.Fatal("call after Close succeeded")
	}
}
