package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// rawTimeout bounds one exchange whose context carries no deadline.
const rawTimeout = 60 * time.Second

// rawMaxBody is the largest response body the raw client accepts.
const rawMaxBody = 64 << 20

var errRawClosed = errors.New("bench: raw http client closed")

// rawClient is a minimal HTTP/1.1 keep-alive load client: it sends one prebuilt
// request per call over a pool of persistent connections and reads the answer
// without per-request allocations. It exists so that a load figure measures the
// server rather than net/http's client machinery (its per-connection read and
// write goroutines and per-request headers), as wrk-style load tools do. It speaks
// only what the node answers: a status line, headers and a Content-Length body.
type rawClient struct {
	addr string
	req  []byte
	idle chan *rawConn
	// idAt, when not negative, is where in req a request id of idDigits decimal
	// digits is written afresh for each call (each connection sends its own copy).
	idAt int
	ids  atomic.Uint64

	mu     sync.Mutex
	closed bool
	conns  map[*rawConn]struct{} // every open connection, idle or in use
}

// rawConn is one persistent connection and its reusable buffers.
type rawConn struct {
	c    net.Conn
	br   *bufio.Reader
	body []byte
	req  []byte // the client's request with this call's id, when it numbers them
}

// idDigits is the width of a numbered request's id.
const idDigits = 12

// newRawClient returns a client that POSTs body to path on the server at baseURL
// ("http://host:port") with the owner key header and the headers given as name,
// value pairs, and keeps up to maxIdle idle connections.
func newRawClient(baseURL, path, terminalKey string, body []byte, maxIdle int, headers ...string) (*rawClient, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("bench: raw http: %w", err)
	}
	if u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("bench: raw http: want an http://host:port address, got %q", baseURL)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	req := make([]byte, 0, 256+len(body))
	req = append(req, "POST "...)
	req = append(req, path...)
	req = append(req, " HTTP/1.1\r\nHost: "...)
	req = append(req, u.Host...)
	req = append(req, "\r\nx-terminal-key: "...)
	req = append(req, terminalKey...)
	for i := 0; i+1 < len(headers); i += 2 {
		req = append(req, "\r\n"...)
		req = append(req, headers[i]...)
		req = append(req, ": "...)
		req = append(req, headers[i+1]...)
	}
	req = append(req, "\r\nContent-Type: application/json\r\nContent-Length: "...)
	req = strconv.AppendInt(req, int64(len(body)), 10)
	req = append(req, "\r\n\r\n"...)
	req = append(req, body...)
	return &rawClient{addr: addr, req: req, idAt: -1, idle: make(chan *rawConn, max(1, maxIdle)), conns: map[*rawConn]struct{}{}}, nil
}

// do sends the request once and calls check with the answer's status and body; the
// body is only valid during check. A connection is reused only after a complete,
// successful exchange: on any error, check's included, it is closed.
func (c *rawClient) do(ctx context.Context, check func(status int, body []byte) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	deadline, hasDeadline := ctx.Deadline()
	if !hasDeadline {
		deadline = time.Now().Add(rawTimeout)
	}
	// A timeout at the context's deadline is reported as the context's error, even
	// if the context's own timer has not fired yet.
	ctxErr := func(err error) error {
		if hasDeadline && isTimeout(err) && !time.Now().Before(deadline) {
			return context.DeadlineExceeded
		}
		return err
	}
	rc, err := c.get(ctx)
	if err != nil {
		return ctxErr(err)
	}
	if err := rc.c.SetDeadline(deadline); err != nil {
		c.drop(rc)
		return err
	}
	req := c.req
	if c.idAt >= 0 {
		if rc.req == nil {
			rc.req = bytes.Clone(c.req)
		}
		req = rc.req
		id := c.ids.Add(1)
		for i := c.idAt + idDigits - 1; i >= c.idAt; i-- {
			req[i] = byte('0' + id%10)
			id /= 10
		}
	}
	status, body, keep, err := rc.exchange(req)
	if err == nil {
		err = check(status, body)
	}
	if err != nil {
		c.drop(rc)
		return ctxErr(err)
	}
	if !keep {
		c.drop(rc)
		return nil
	}
	c.put(rc)
	return nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// get takes an idle connection or dials a new one.
func (c *rawClient) get(ctx context.Context) (*rawConn, error) {
	select {
	case rc := <-c.idle:
		return rc, nil
	default:
	}
	var d net.Dialer
	if _, ok := ctx.Deadline(); !ok {
		d.Timeout = rawTimeout
	}
	nc, err := d.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return nil, fmt.Errorf("bench: raw http: %w", err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	rc := &rawConn{c: nc, br: bufio.NewReaderSize(nc, 8<<10), body: make([]byte, 0, 1024)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		nc.Close()
		return nil, errRawClosed
	}
	c.conns[rc] = struct{}{}
	return rc, nil
}

// put returns a healthy connection to the pool, or closes it when the pool is full.
// A connection put back after close was closed by it, so the next get that takes
// it fails and drops it.
func (c *rawClient) put(rc *rawConn) {
	select {
	case c.idle <- rc:
	default:
		c.drop(rc)
	}
}

// drop closes a connection and forgets it.
func (c *rawClient) drop(rc *rawConn) {
	rc.c.Close()
	c.mu.Lock()
	delete(c.conns, rc)
	c.mu.Unlock()
}

// close closes every connection, idle or in use; later calls fail.
func (c *rawClient) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for rc := range c.conns {
		rc.c.Close()
	}
	clear(c.conns)
	for {
		select {
		case <-c.idle:
		default:
			return
		}
	}
}

// exchange writes req in one write and reads one response: its status, its body
// (in the connection's buffer) and whether the connection may be reused.
func (rc *rawConn) exchange(req []byte) (status int, body []byte, keep bool, err error) {
	if _, err := rc.c.Write(req); err != nil {
		return 0, nil, false, fmt.Errorf("bench: raw http: write: %w", err)
	}
	line, err := rc.line()
	if err != nil {
		return 0, nil, false, err
	}
	// "HTTP/1.x SSS reason"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' || (len(line) > 12 && line[12] != ' ') {
		return 0, nil, false, fmt.Errorf("bench: raw http: malformed status line %q", line)
	}
	keep = line[7] == '1' // HTTP/1.1 keeps the connection unless told otherwise
	for _, ch := range line[9:12] {
		if ch < '0' || ch > '9' {
			return 0, nil, false, fmt.Errorf("bench: raw http: malformed status line %q", line)
		}
		status = status*10 + int(ch-'0')
	}
	length := -1
	for {
		line, err := rc.line()
		if err != nil {
			return status, nil, false, err
		}
		if len(line) == 0 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return status, nil, false, fmt.Errorf("bench: raw http: malformed header line %q", line)
		}
		name, value := line[:colon], bytes.Trim(line[colon+1:], " \t")
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, ok := parseLength(value)
			if !ok || (length >= 0 && n != length) {
				return status, nil, false, fmt.Errorf("bench: raw http: status %d: bad Content-Length %q", status, value)
			}
			length = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return status, nil, false, fmt.Errorf("bench: raw http: status %d: Transfer-Encoding %q is not supported", status, value)
		case bytes.EqualFold(name, []byte("Connection")):
			if hasToken(value, "close") {
				keep = false
			} else if hasToken(value, "keep-alive") {
				keep = true
			}
		}
	}
	if length < 0 {
		return status, nil, false, fmt.Errorf("bench: raw http: status %d: response without Content-Length", status)
	}
	if length > rawMaxBody {
		return status, nil, false, fmt.Errorf("bench: raw http: status %d: body of %d bytes is too large", status, length)
	}
	if cap(rc.body) < length {
		rc.body = make([]byte, length)
	}
	rc.body = rc.body[:length]
	if _, err := io.ReadFull(rc.br, rc.body); err != nil {
		return status, nil, false, fmt.Errorf("bench: raw http: status %d: body: %w", status, err)
	}
	return status, rc.body, keep, nil
}

// line reads one CRLF- or LF-terminated line without its terminator; the slice is
// valid until the next read.
func (rc *rawConn) line() ([]byte, error) {
	line, err := rc.br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, errors.New("bench: raw http: response line too long")
		}
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("bench: raw http: read: %w", err)
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// parseLength parses a non-negative decimal Content-Length.
func parseLength(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	n := 0
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		n = n*10 + int(ch-'0')
	}
	return n, true
}

// hasToken reports whether the comma-separated header value holds token, ignoring
// case.
func hasToken(value []byte, token string) bool {
	for len(value) > 0 {
		var t []byte
		if i := bytes.IndexByte(value, ','); i >= 0 {
			t, value = value[:i], value[i+1:]
		} else {
			t, value = value, nil
		}
		if bytes.EqualFold(bytes.Trim(t, " \t"), []byte(token)) {
			return true
		}
	}
	return false
}

// rawInvoke returns an Op that invokes the echo row through c and checks the
// answer as HTTPInvoke does.
func rawInvoke(c *rawClient) Op {
	want := []byte(`"result":"` + EchoBody + `"`)
	return func(ctx context.Context, i int) error {
		return c.do(ctx, func(status int, body []byte) error {
			if status != http.StatusOK {
				return fmt.Errorf("bench: dispatch %d (lean client): status %d, want %d: %s", i, status, http.StatusOK, body)
			}
			if !bytes.Contains(body, want) {
				return fmt.Errorf("bench: dispatch %d (lean client): unexpected answer %s", i, body)
			}
			return nil
		})
	}
}

// dispatchBody is the request body HTTPInvoke and RawHTTPInvoke send.
func dispatchBody() []byte {
	b, _ := json.Marshal(map[string]string{"key": EchoKey, "body": EchoBody})
	return b
}

// RawHTTPInvoke returns an Op that invokes the echo row through POST /api/dispatch
// as HTTPInvoke does, but with a lean keep-alive client instead of net/http's, so
// that at many callers the figure is the server's and not the client's. Its
// connections are shared by every Op it returns and closed by Close.
func (e *Env) RawHTTPInvoke() Op {
	e.rawMu.Lock()
	defer e.rawMu.Unlock()
	if e.raw == nil {
		c, err := newRawClient(e.Node.URL(), "/api/dispatch", TerminalKey, dispatchBody(), 256)
		if err != nil {
			return func(context.Context, int) error { return err }
		}
		e.raw = c
	}
	return rawInvoke(e.raw)
}
