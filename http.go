package capdir

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/capdir/capdir/internal/loopback"
)

// HTTPConfig configures the node's HTTP server (Config.HTTP). A zero field takes
// its default; a negative timeout means none.
type HTTPConfig struct {
	// Addr is where the node listens when Config.HTTPListener is nil; the node
	// serves no HTTP when both are empty.
	Addr string
	// ReadHeaderTimeout bounds reading a request's line and headers
	// (DefaultHTTPReadHeaderTimeout).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request (DefaultHTTPReadTimeout).
	ReadTimeout time.Duration
	// WriteTimeout runs from the end of a request's headers to the end of its
	// answer (the dispatch wait plus HTTPWriteMargin); it must exceed the
	// dispatch wait (Config.API.DispatchWait).
	WriteTimeout time.Duration
	// IdleTimeout bounds a keep-alive connection's wait for its next request
	// (DefaultHTTPIdleTimeout).
	IdleTimeout time.Duration
	// MaxHeaderBytes caps a request's line and headers
	// (DefaultHTTPMaxHeaderBytes).
	MaxHeaderBytes int
	// Console says whether the node serves the owner's console at /console/
	// (package api/console): ConsoleAuto, the zero value, serves it when the node
	// listens on a loopback address only.
	Console ConsoleMode
}

// ConsoleMode is whether a node serves the owner's console.
type ConsoleMode int

// The console modes.
const (
	// ConsoleAuto serves the console when the HTTP listener is a loopback address
	// (127.0.0.1, ::1, localhost), and not when it may be reached from elsewhere:
	// there, ask for it with ConsoleOn (capdir serve --console), ideally behind TLS.
	ConsoleAuto ConsoleMode = iota
	// ConsoleOn serves the console on any listener.
	ConsoleOn
	// ConsoleOff never serves it.
	ConsoleOff
)

// serves reports whether the console is served on a listener at addr.
func (m ConsoleMode) serves(addr string) bool {
	switch m {
	case ConsoleOn:
		return true
	case ConsoleOff:
		return false
	}
	return loopback.Host(addr) // a listen address, host:port
}

// Defaults of the HTTP server's limits (HTTPConfig).
const (
	// DefaultHTTPReadHeaderTimeout bounds reading a request's line and headers.
	DefaultHTTPReadHeaderTimeout = 10 * time.Second
	// DefaultHTTPReadTimeout bounds reading a whole request, body included. An
	// import's body may take longer, but may not stall for longer than this.
	DefaultHTTPReadTimeout = 30 * time.Second
	// DefaultHTTPIdleTimeout is how long a keep-alive connection may wait for its
	// next request.
	DefaultHTTPIdleTimeout = 60 * time.Second
	// DefaultHTTPMaxHeaderBytes caps a request's line and headers (the GET form of
	// dispatch carries its body in the URL); more is answered 431.
	DefaultHTTPMaxHeaderBytes = 1 << 20
	// HTTPWriteMargin is what the default write timeout adds to the dispatch wait.
	// The write timeout runs from the end of a request's headers to the end of its
	// answer, so it covers the handler: POST /api/dispatch waits up to the dispatch
	// wait for its receipt, then writes its answer.
	HTTPWriteMargin = 30 * time.Second
)

// httpLimits are the HTTP server's limits with defaults applied (0: none).
type httpLimits struct {
	readHeader, read, write, idle time.Duration
	maxHeaderBytes                int
}

// httpLimits applies the defaults to c.HTTP and checks them. The
// write timeout must exceed the dispatch wait, or a dispatch that waits its full
// time could never deliver its 202.
func (c *Config) httpLimits() (httpLimits, error) {
	pick := func(d, def time.Duration) time.Duration {
		switch {
		case d == 0:
			return def
		case d < 0:
			return 0
		}
		return d
	}
	wait := c.API.WithDefaults().DispatchWait
	h := c.HTTP
	l := httpLimits{
		readHeader:     pick(h.ReadHeaderTimeout, DefaultHTTPReadHeaderTimeout),
		read:           pick(h.ReadTimeout, DefaultHTTPReadTimeout),
		write:          pick(h.WriteTimeout, wait+HTTPWriteMargin),
		idle:           pick(h.IdleTimeout, DefaultHTTPIdleTimeout),
		maxHeaderBytes: h.MaxHeaderBytes,
	}
	if l.maxHeaderBytes == 0 {
		l.maxHeaderBytes = DefaultHTTPMaxHeaderBytes
	}
	var errs []error
	if l.write > 0 && l.write <= wait {
		errs = append(errs, fmt.Errorf("node: the HTTP write timeout (%v, --http-write-timeout) must exceed the dispatch wait (%v): it covers POST /api/dispatch's wait for the receipt and the answer after it", l.write, wait))
	}
	if l.maxHeaderBytes < 0 {
		errs = append(errs, fmt.Errorf("node: the HTTP header size cap (--http-max-header-bytes) must be positive; got %d", l.maxHeaderBytes))
	}
	return l, errors.Join(errs...)
}

// server is the HTTP server over h with the limits l.
func (l httpLimits) server(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.readHeader,
		ReadTimeout:       l.read,
		WriteTimeout:      l.write,
		IdleTimeout:       l.idle,
		MaxHeaderBytes:    l.maxHeaderBytes,
	}
}
