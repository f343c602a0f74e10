package httprunner

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// newRecorder is an upstream that keeps everything it received (received),
// answering with h.
func newRecorder(t *testing.T, h http.HandlerFunc) *upstreamtest.Upstream {
	t.Helper()
	return upstreamtest.Start(t, h)
}

// received is everything rec got, one line a request: method, URI, every header
// (Referer included) and the body.
func received(rec *upstreamtest.Upstream) []string {
	var out []string
	for _, r := range rec.Requests() {
		out = append(out, fmt.Sprintf("%s %s %v %s", r.Method, r.RequestURI, r.Header, r.Body))
	}
	return out
}

// secretForms are every way the test credentials can appear on the wire.
var secretForms = []string{
	secretBearer, secretBasic, secretQuery, secretHeader,
	base64.StdEncoding.EncodeToString([]byte(secretBasic + ":")),
	url.QueryEscape(secretQuery), url.PathEscape(secretQuery), "SECRET",
}

// A redirect to another origin (another port of the same host) never carries a
// credential, in any auth form: a credentialed call does not follow it.
func TestHTTPRunnerRedirectOffOrigin(t *testing.T) {
	other := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "landed") })
	origin := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/landing?from=origin#frag", http.StatusFound)
		case "/hop": // same origin first, then away
			http.Redirect(w, r, "/away", http.StatusMovedPermanently)
		default:
			fmt.Fprintf(w, "auth=%q key=%q referer=%q", r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("Referer"))
		}
	})
	r := newTestRunner(t, nil)
	auths := map[string]string{
		"bearer":  "bearer:GROK_API_KEY",
		"basic":   "basic:BASIC_PASS",
		"headers": `headers:{"X-Api-Key":"$ANTH_KEY"}`,
		"query":   "query:key=MAPS_KEY",
		"oauth":   "oauth:GROK_API_KEY",
	}
	for form, auth := range auths {
		for _, path := range []string{"/away", "/hop"} {
			t.Run(form+path, func(t *testing.T) {
				row := &contract.Row{Key: "R", Type: contract.TypeHTTP, Target: "GET " + origin.URL + path + "?q=1", Auth: auth}
				o := r.Run(context.Background(), runner.Call{Row: row})
				want := "ERR:http:redirect_off_origin:" + other.URL + "/landing"
				if o.Result != want || !errors.Is(o.Err, ErrRedirectOffOrigin) || !o.Ran || o.Upstream != http.StatusFound {
					t.Errorf("got %q err=%v ran=%v upstream=%d; want %q", o.Result, o.Err, o.Ran, o.Upstream, want)
				}
				assertNoSecrets(t, o)
			})
		}
	}
	for _, req := range received(other) {
		for _, s := range secretForms {
			if strings.Contains(req, s) {
				t.Errorf("the other origin received %q: %s", s, req)
			}
		}
	}
	if n := len(received(other)); n != 0 {
		t.Errorf("the other origin received %d requests from credentialed calls", n)
	}
}

// Within the row's origin a credentialed call follows the redirect with its
// credential headers, and sends no Referer (which would carry a query credential).
func TestHTTPRunnerRedirectSameOrigin(t *testing.T) {
	var mu sync.Mutex
	var referer string
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/here?x=1", http.StatusTemporaryRedirect)
			return
		}
		mu.Lock()
		referer = r.Header.Get("Referer")
		mu.Unlock()
		fmt.Fprintf(w, "auth=%s key=%s", r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"))
	})
	r := newTestRunner(t, nil)
	for _, tt := range []struct {
		auth, want   string
		credentialed bool
	}{
		{"bearer:GROK_API_KEY", "HTTP 200:auth=Bearer REDACTED key=", true},
		{"basic:BASIC_PASS", "HTTP 200:auth=Basic REDACTED key=", true},
		{`headers:{"X-Api-Key":"$ANTH_KEY"}`, "HTTP 200:auth= key=REDACTED", true},
		{"oauth:GROK_API_KEY", "HTTP 200:auth=Bearer REDACTED key=", true},
		{"query:key=MAPS_KEY", "HTTP 200:auth= key=", true},
		{"bearer:ABSENT_API_KEY", "HTTP 200:auth= key=", false},
		{`headers:{"X-Version":"2023-06-01"}`, "HTTP 200:auth= key=", false},
	} {
		row := &contract.Row{Key: "R", Type: contract.TypeHTTP, Target: "GET " + srv.URL + "/moved?q=1", Auth: tt.auth}
		if o := r.Run(context.Background(), runner.Call{Row: row}); o.Result != tt.want || o.Err != nil {
			t.Errorf("%s: got %q, %v; want %q", tt.auth, o.Result, o.Err, tt.want)
		}
		mu.Lock()
		if (referer != "") == tt.credentialed {
			t.Errorf("%s: Referer %q", tt.auth, referer)
		}
		mu.Unlock()
	}
}

// A call without a credential follows redirects anywhere, as net/http does, up to
// ten; a configured client's own CheckRedirect still applies.
func TestHTTPRunnerRedirectWithoutCredential(t *testing.T) {
	other := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "landed") })
	origin := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/loop" {
			http.Redirect(w, r, "/loop", http.StatusFound)
			return
		}
		http.Redirect(w, r, other.URL+"/landing", http.StatusFound)
	})
	r := newTestRunner(t, nil)
	row := &contract.Row{Key: "R", Type: contract.TypeHTTP, Target: "GET " + origin.URL + "/away"}
	if o := r.Run(context.Background(), runner.Call{Row: row}); o.Result != "HTTP 200:landed" {
		t.Errorf("no credential: %+v", o)
	}
	row.Auth = "bearer:ABSENT_API_KEY" // names a variable that is not set: nothing to protect
	if o := r.Run(context.Background(), runner.Call{Row: row}); o.Result != "HTTP 200:landed" {
		t.Errorf("absent credential: %+v", o)
	}
	loop := &contract.Row{Key: "L", Type: contract.TypeHTTP, Target: "GET " + origin.URL + "/loop"}
	if o := r.Run(context.Background(), runner.Call{Row: loop}); o.Result != "ERR:http:fetch:stopped after 10 redirects" || !errors.Is(o.Err, ErrFetch) {
		t.Errorf("loop: %+v", o)
	}

	own := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r = newTestRunner(t, func(c *Config) { c.Client = own })
	if o := r.Run(context.Background(), runner.Call{Row: row}); !strings.HasPrefix(o.Result, "HTTP 302:") {
		t.Errorf("client's own policy: %+v", o)
	}
	row.Auth = "bearer:GROK_API_KEY"
	if o := r.Run(context.Background(), runner.Call{Row: row}); !errors.Is(o.Err, ErrRedirectOffOrigin) {
		t.Errorf("client's own policy, credentialed: %+v", o)
	}
	if own.CheckRedirect == nil || len(received(other)) != 2 {
		t.Errorf("client modified or unexpected hops: %d", len(received(other)))
	}
}

func TestOrigin(t *testing.T) {
	same := [][2]string{
		{"http://h/a", "http://h:80/b?q"},
		{"https://H.example/", "https://h.example:443/x"},
		{"HTTP://127.0.0.1:8080/", "http://127.0.0.1:8080/y"},
		{"http://[::1]:80/", "http://[::1]/"},
	}
	differ := [][2]string{
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8081/"},
		{"https://h/", "http://h/"},
		{"http://h/", "http://h.evil/"},
		{"http://h:443/", "https://h/"},
	}
	for _, p := range same {
		a, _ := url.Parse(p[0])
		b, _ := url.Parse(p[1])
		if origin(a) != origin(b) {
			t.Errorf("%s and %s: %s != %s", p[0], p[1], origin(a), origin(b))
		}
	}
	for _, p := range differ {
		a, _ := url.Parse(p[0])
		b, _ := url.Parse(p[1])
		if origin(a) == origin(b) {
			t.Errorf("%s and %s share origin %s", p[0], p[1], origin(a))
		}
	}
}
