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

// An upstream that echoes the request's headers and line in a body, encoded:
// each header or the request line base64'd as a whole (so what was sent sits at
// whatever offset its name leaves), every character \u-escaped, or case-folded.
// Those forms are scrubbed too, for what each auth form puts on the wire: the
// value, basic's base64 of it, a query parameter's escape of it (the value here
// holds '/', '+' and '='). What remains of an encoded line around REDACTED is a
// few characters its name and the edges decide, never ten characters of the
// value or of what was sent, even decoded once or twice.
func TestHTTPRunnerScrubsCredentialEchoedEncoded(t *testing.T) {
	const secret = "SECRET/VALUE+abc=123XYZ"
	origin := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		for _, line := range []string{"Authorization: " + r.Header.Get("Authorization"), "X-Key: " + r.Header.Get("X-Key"), "GET " + r.RequestURI} {
			var u strings.Builder
			for _, c := range line {
				fmt.Fprintf(&u, `\u%04x`, c)
			}
			fmt.Fprintf(w, "%s\n%s\n%s\n%s\n%s\n", base64.StdEncoding.EncodeToString([]byte(line)),
				base64.RawURLEncoding.EncodeToString([]byte("x"+line)), u.String(), strings.ToLower(line), strings.ToUpper(line))
		}
	})
	r := newTestRunner(t, func(c *Config) { c.Env = runner.MapEnv(map[string]string{"DEMO_API_KEY": secret}) })
	var needles []string
	for _, v := range []string{secret, base64.StdEncoding.EncodeToString([]byte(secret + ":")), url.QueryEscape(secret)} {
		for _, f := range []string{v, strings.ToLower(v), strings.ToUpper(v)} {
			for i := 0; i+10 <= len(f); i++ {
				needles = append(needles, f[i:i+10])
			}
		}
	}
	leaks := func(s string) string {
		for _, n := range needles {
			if strings.Contains(s, n) {
				return n
			}
		}
		return ""
	}
	decode := func(s string) []string {
		var out []string
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if d, err := enc.DecodeString(s); err == nil {
				out = append(out, string(d))
			}
		}
		return out
	}
	for _, auth := range []string{"bearer:DEMO_API_KEY", "basic:DEMO_API_KEY", `headers:{"X-Key":"$DEMO_API_KEY"}`, "query:key=DEMO_API_KEY"} {
		row := &contract.Row{Key: "R", Type: contract.TypeHTTP, Target: "GET " + origin.URL + "/", Auth: auth}
		o := r.Run(context.Background(), runner.Call{Row: row})
		if strings.Count(o.Result, runner.Redacted) < 5 {
			t.Errorf("%s: %q; want each echo redacted", auth, o.Result)
		}
		for _, line := range strings.Split(o.Result, "\n") {
			if n := leaks(line); n != "" {
				t.Errorf("%s: %q holds %q", auth, line, n)
			}
			for _, part := range strings.Split(line, runner.Redacted) {
				for _, d := range decode(part) {
					for _, dd := range append(decode(d), d) {
						if n := leaks(dd); n != "" {
							t.Errorf("%s: %q decodes to %q, which holds %q", auth, part, dd, n)
						}
					}
				}
			}
		}
	}
}
