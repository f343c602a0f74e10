// Package upstreamtest starts the local HTTP upstreams that capdir's tests call
// through http rows: one kind for every test, instead of a recording, gated,
// hanging or echoing server written again in each package. An Upstream records
// every request it gets (method, URI, headers, body) and answers it with the
// handler it was started with; a gated one holds every request until the test
// releases it or the caller goes away, and says when each arrives and each
// caller leaves. Every Upstream is closed when its test ends.
package upstreamtest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Request is one request as an upstream got it.
type Request struct {
	Method     string
	Path       string
	RawQuery   string
	RequestURI string
	Header     http.Header
	Body       string
	// At is when the request arrived.
	At time.Time
}

// Query is the request's query, parsed.
func (r Request) Query() url.Values {
	v, _ := url.ParseQuery(r.RawQuery)
	return v
}

// Upstream is a local HTTP server that records what it gets and answers as told.
type Upstream struct {
	*httptest.Server
	answer http.HandlerFunc

	mu       sync.Mutex
	requests []Request
	hits     atomic.Int64
	ended    atomic.Int64

	gated     bool
	release   chan struct{}
	releaseMu sync.Once
	arrived   chan struct{}
	left      chan struct{}
}

// signals bounds the arrivals and departures an Upstream announces without a
// reader: far more than a test makes.
const signals = 1024

// Start starts an upstream that answers every request with answer (nil: 200 with
// an empty body), after recording it.
func Start(t testing.TB, answer http.HandlerFunc) *Upstream {
	t.Helper()
	return start(t, answer, false)
}

// StartGated starts an upstream that records every request, announces it on
// Arrived, and holds it until Release, then answers it with answer (nil: 200 with
// an empty body). A held request whose caller goes away first (its timeout, a
// stopping node) is announced on Left and not answered. An upstream never
// released hangs every call until its caller gives up.
func StartGated(t testing.TB, answer http.HandlerFunc) *Upstream {
	t.Helper()
	return start(t, answer, true)
}

func start(t testing.TB, answer http.HandlerFunc, gated bool) *Upstream {
	if answer == nil {
		answer = func(http.ResponseWriter, *http.Request) {}
	}
	u := &Upstream{answer: answer, gated: gated, release: make(chan struct{}),
		arrived: make(chan struct{}, signals), left: make(chan struct{}, signals)}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.Close)
	return u
}

func (u *Upstream) serve(w http.ResponseWriter, r *http.Request) {
	defer u.ended.Add(1)
	body, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.requests = append(u.requests, Request{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
		RequestURI: r.RequestURI, Header: r.Header.Clone(), Body: string(body), At: time.Now()})
	n := u.hits.Add(1)
	u.mu.Unlock()
	if u.gated {
		announce(u.arrived)
		select {
		case <-u.release:
		case <-r.Context().Done():
			announce(u.left)
			return
		}
	}
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	u.answer(w, r.WithContext(context.WithValue(r.Context(), hitKey{}, n)))
}

type hitKey struct{}

// Hit is the number of r among the requests its upstream got, from 1, for an
// answer that depends on it (the first call refused, the next ones taken).
func Hit(r *http.Request) int64 {
	n, _ := r.Context().Value(hitKey{}).(int64)
	return n
}

func announce(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Release lets every held request and every later one be answered. It may be
// called more than once.
func (u *Upstream) Release() { u.releaseMu.Do(func() { close(u.release) }) }

// Arrived yields one value per request a gated upstream got.
func (u *Upstream) Arrived() <-chan struct{} { return u.arrived }

// Left yields one value per held request whose caller went away before Release.
func (u *Upstream) Left() <-chan struct{} { return u.left }

// Hits is how many requests the upstream got.
func (u *Upstream) Hits() int64 { return u.hits.Load() }

// Ended is how many of them are over: answered, or left by their caller.
func (u *Upstream) Ended() int64 { return u.ended.Load() }

// Requests are the requests the upstream got, in the order they arrived.
func (u *Upstream) Requests() []Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Request(nil), u.requests...)
}

// Header is the named header of every request, in order ("" where one had none).
func (u *Upstream) Header(name string) []string {
	var out []string
	for _, r := range u.Requests() {
		out = append(out, r.Header.Get(name))
	}
	return out
}

// Bodies are the bodies of every request, in order.
func (u *Upstream) Bodies() []string {
	var out []string
	for _, r := range u.Requests() {
		out = append(out, r.Body)
	}
	return out
}

// Queries are the raw queries of every request, in order.
func (u *Upstream) Queries() []string {
	var out []string
	for _, r := range u.Requests() {
		out = append(out, r.RawQuery)
	}
	return out
}

// Host is the upstream's host:port, as a row's target or an allow-list names it.
func (u *Upstream) Host() string { return u.Listener.Addr().String() }

// Close releases every held request and stops the server; it waits for the
// requests under way. Start has it called when the test ends; calling it sooner
// is allowed (a test that checks for goroutines left behind).
func (u *Upstream) Close() {
	u.Release()
	u.Server.Close()
}
