package api

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A request that reached a network address, not a loopback one, is passed on
// whatever its Host: such a node is reached by the names its operator gives it.
func TestGuardHostPassesRequestsToANetworkAddress(t *testing.T) {
	h := guardHost(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }), "")
	for _, c := range []struct {
		local string
		host  string
		want  int
	}{
		{"10.1.2.3:8080", "capdir.internal:8080", 204},
		{"[2001:db8::1]:8080", "evil.example", 204},
		{"127.0.0.1:8080", "evil.example", 403},
		{"[::1]:8080", "evil.example", 403},
		{"127.0.0.1:8080", "localhost:8080", 204},
	} {
		r := httptest.NewRequest("GET", "/healthz", nil)
		r.Host = c.host
		addr, err := net.ResolveTCPAddr("tcp", c.local)
		if err != nil {
			t.Fatal(err)
		}
		r = r.WithContext(contextWithLocalAddr(r, addr))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != c.want {
			t.Errorf("local %s, Host %s: %d, want %d", c.local, c.host, rec.Code, c.want)
		}
	}
}

func contextWithLocalAddr(r *http.Request, a net.Addr) context.Context {
	return context.WithValue(r.Context(), http.LocalAddrContextKey, a)
}

// The check costs a request no allocation.
func TestGuardHostAllocatesNothing(t *testing.T) {
	h := guardHost(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), "capdir.example.com")
	r := httptest.NewRequest("POST", "/api/dispatch", nil)
	r.Host = "127.0.0.1:8080"
	r = r.WithContext(contextWithLocalAddr(r, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}))
	var w http.ResponseWriter = httptest.NewRecorder()
	if n := testing.AllocsPerRun(100, func() { h.ServeHTTP(w, r) }); n != 0 {
		t.Fatalf("a loopback request through guardHost: %v allocations", n)
	}
}
