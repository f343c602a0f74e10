package mcprunner

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/capdir/capdir/dispatcher/runner"
)

// An upstream that redirects its endpoint to another origin never gets the
// credential sent there: the redirect is not followed, the call fails as
// unreachable, and the other origin sees no request at all.
func TestUpstreamRedirectOffOriginKeepsTheCredential(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		if strings.Contains(r.Header.Get("X-Api-Key"), "sekrit") {
			t.Errorf("the credential reached another origin: %q", r.Header.Get("X-Api-Key"))
		}
		http.Error(w, "no", http.StatusNotFound)
	}))
	t.Cleanup(other.Close)
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirecting.Close)
	r := newRunner(t, Static{"up": {Name: "up", URL: redirecting.URL, Auth: `headers:{"X-Api-Key":"$UP_KEY"}`}},
		map[string]string{"UP_KEY": "sekrit"})
	o := r.Run(context.Background(), runner.Call{Row: mcpRow("up/echo", "")})
	if !strings.HasPrefix(o.Result, "ERR:mcp:up:unreachable:") || !errors.Is(o.Err, ErrUnreachable) {
		t.Fatalf("redirected upstream: %q (%v)", o.Result, o.Err)
	}
	if strings.Contains(o.Result, "sekrit") {
		t.Fatalf("the answer holds the credential: %q", o.Result)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Fatalf("the other origin got %d requests, want none", n)
	}
}

// NewHTTP, behind both --mcp-http and the owner's registration, refuses a URL
// that carries a credential or anything but the endpoint, a bad name, and a
// malformed auth.
func TestNewHTTPRefuses(t *testing.T) {
	for _, tc := range []struct{ name, url, auth, want string }{
		{"gh", "https://user:pw@mcp.example/", "", "user info"},
		{"gh", "https://mcp.example/?token=x", "", "query or a fragment"},
		{"gh", "https://mcp.example/?", "", "query or a fragment"},
		{"gh", "https://mcp.example/#x", "", "query or a fragment"},
		{"gh", "file:///etc/passwd", "", "http:// or https://"},
		{"gh", "https://", "", "http:// or https://"},
		{"g.h", "https://mcp.example/", "", "letters, digits"},
		{"", "https://mcp.example/", "", "letters, digits"},
		{strings.Repeat("a", 65), "https://mcp.example/", "", "letters, digits"},
		{"gh", "https://mcp.example/", "nope:X", "auth"},
	} {
		_, err := NewHTTP(tc.name, tc.url, tc.auth)
		if !errors.Is(err, ErrBadUpstream) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewHTTP(%q, %q, %q) = %v, want ErrBadUpstream naming %q", tc.name, tc.url, tc.auth, err, tc.want)
		}
	}
	if u, err := NewHTTP("gh", "https://mcp.example/v1", " bearer:GH_TOKEN "); err != nil || u.Auth != "bearer:GH_TOKEN" {
		t.Fatalf("a good upstream: %+v, %v", u, err)
	}
}
