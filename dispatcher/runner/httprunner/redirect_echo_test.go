package httprunner

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
)

// An upstream that puts the credential it received, URL-escaped, into a URL: the
// path of a redirect to another origin (which the refusal quotes, without its
// query), or of a redirect within its origin whose URL it then echoes. The
// escaped forms are scrubbed as the value is, in every auth form: a basic
// credential's base64 holds '+' and '/' here, which a path escapes.
func TestHTTPRunnerScrubsCredentialEchoedInURLs(t *testing.T) {
	const odd = `odd a b&c<d>"e' /?~>`
	b64 := base64.StdEncoding.EncodeToString([]byte(odd + ":"))
	if !strings.Contains(b64, "+") || !strings.Contains(b64, "/") {
		t.Fatalf("base64 %s should hold '+' and '/'", b64)
	}
	other := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "landed") })
	origin := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		echo := url.PathEscape(r.Header.Get("Authorization") + "|" + r.Header.Get("X-Odd"))
		switch {
		case strings.HasPrefix(r.URL.Path, "/away"):
			http.Redirect(w, r, other.URL+"/landing/"+echo, http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/hop"):
			http.Redirect(w, r, "/echo/"+echo, http.StatusFound)
		default:
			fmt.Fprintf(w, "you are at %s", r.URL.EscapedPath())
		}
	})
	r := newTestRunner(t, func(c *Config) { c.Env = runner.MapEnv(map[string]string{"ODD_TOKEN": odd}) })
	forms := []string{odd, url.PathEscape(odd), url.QueryEscape(odd), b64, url.PathEscape(b64), url.QueryEscape(b64)}
	for _, auth := range []string{"bearer:ODD_TOKEN", "basic:ODD_TOKEN", `headers:{"X-Odd":"$ODD_TOKEN"}`} {
		for _, path := range []string{"/away", "/hop"} {
			row := &contract.Row{Key: "R", Type: contract.TypeHTTP, Target: "GET " + origin.URL + path, Auth: auth}
			o := r.Run(context.Background(), runner.Call{Row: row})
			if !strings.Contains(o.Result, runner.Redacted) {
				t.Errorf("%s %s: %q; want the echoed credential, redacted", auth, path, o.Result)
			}
			for _, f := range forms {
				if strings.Contains(o.Result, f) {
					t.Errorf("%s %s: the result holds %q: %s", auth, path, f, o.Result)
				}
			}
		}
	}
	if n := len(received(other)); n != 0 {
		t.Errorf("the other origin received %d requests", n)
	}
}

// An upstream that echoes the request's headers in a body, encoded: each header
// base64'd as a whole (so the value sits at whatever offset its name leaves),
// every character \u-escaped, or case-folded. Those forms are scrubbed too; what
// remains of an encoded header around REDACTED is a few characters its name and
// the value's edges decide, never enough of the value to recover it.
func TestHTTPRunnerScrubsCredentialEchoedEncoded(t *testing.T) {
	const secret = "SECRETVALUE_abc123XYZ"
	origin := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		for _, name := range []string{"Authorization", "X-Key"} {
			h := name + ": " + r.Header.Get(name)
			var u strings.Builder
			for _, c := range h {
				fmt.Fprintf(&u, `\u%04x`, c)
			}
			fmt.Fprintf(w, "%s\n%s\n%s\n%s\n%s\n", base64.StdEncoding.EncodeToString([]byte(h)),
				base64.RawURLEncoding.EncodeToString([]byte("x"+h)), u.String(), strings.ToLower(h), strings.ToUpper(h))
		}
	})
	r := newTestRunner(t, func(c *Config) { c.Env = runner.MapEnv(map[string]string{"DEMO_API_KEY": secret}) })
	for _, auth := range []string{"bearer:DEMO_API_KEY", `headers:{"X-Key":"$DEMO_API_KEY"}`} {
		row := &contract.Row{Key: "R", Type: contract.TypeHTTP, Target: "GET " + origin.URL + "/", Auth: auth}
		o := r.Run(context.Background(), runner.Call{Row: row})
		if strings.Count(o.Result, runner.Redacted) < 5 {
			t.Errorf("%s: %q; want each echo redacted", auth, o.Result)
		}
		for _, line := range strings.Split(o.Result, "\n") {
			for _, part := range strings.Split(line, runner.Redacted) {
				if len(part) >= 8 && (strings.Contains(secret, part) || strings.Contains(strings.ToLower(secret), part)) {
					t.Errorf("%s: %q holds %q of the value", auth, line, part)
				}
				if dec, err := base64.StdEncoding.DecodeString(part); err == nil && strings.Contains(string(dec), secret[:8]) {
					t.Errorf("%s: %q decodes to %q", auth, part, dec)
				}
			}
			if strings.Contains(line, `\u0053\u0045\u0043`) || strings.Contains(line, "secretvalue") || strings.Contains(line, "SECRETVALUE_ABC") {
				t.Errorf("%s: the value shows in %q", auth, line)
			}
		}
	}
}
