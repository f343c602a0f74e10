package loopback

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestHost(t *testing.T) {
	for in, want := range map[string]bool{
		"localhost": true, "localhost:8080": true, "127.0.0.1": true, "127.0.0.2:9": true, "[::1]:80": true, "::1": true, "[::1]": true,
		"LOCALHOST": false, "localhost.evil.example": false, "127.0.0.1.nip.io": false, "0.0.0.0:1": false, "10.0.0.1:80": false, "": false,
	} {
		if got := Host(in); got != want {
			t.Errorf("Host(%q) = %v, want %v", in, got, want)
		}
	}
}

// A request's local address is read without an allocation.
func TestReached(t *testing.T) {
	at := func(a net.Addr) *http.Request {
		r := httptest.NewRequest("GET", "/", nil)
		return r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, a))
	}
	lo, lan := at(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}), at(&net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 80})
	if !Reached(lo) || Reached(lan) || Reached(httptest.NewRequest("GET", "/", nil)) {
		t.Fatal("Reached: want true for 127.0.0.1 only")
	}
	if !Reached(at(&net.UnixAddr{Name: "localhost:1"})) {
		t.Fatal("Reached: a non-TCP address is read from its string")
	}
	if n := testing.AllocsPerRun(100, func() { Reached(lo) }); n != 0 {
		t.Fatalf("Reached: %v allocations", n)
	}
}
