package httprunner

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// newThief is an upstream a caller would like a row's credential sent to: it
// records every request, and whether it carried anything secret (thiefGot).
func newThief(t *testing.T) *upstreamtest.Upstream {
	t.Helper()
	return upstreamtest.Start(t, nil)
}

// thiefGot is how many requests th got, and the Authorization, X-Api-Key header
// and query of each.
func thiefGot(th *upstreamtest.Upstream) (int, []string) {
	var got []string
	for _, r := range th.Requests() {
		got = append(got, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Api-Key")+"|"+r.RawQuery)
	}
	return len(got), got
}

// A row with auth is sent only to the literal origin of its target, whatever the
// arguments make of the URL: a row stored with a slot in its origin (before the
// directory refused them) is refused every call, and a slot in the path or query
// cannot move the call elsewhere. Nothing reaches the thief.
func TestCredentialStaysOnTheTemplateOrigin(t *testing.T) {
	good, th := echoServer(t), newThief(t)
	goodHost, thiefHost := strings.TrimPrefix(good.URL, "http://"), strings.TrimPrefix(th.URL, "http://")
	r := newTestRunner(t, nil)
	auths := []string{"bearer:GROK_API_KEY", "oauth:GROK_API_KEY", "basic:BASIC_PASS", "query:key=MAPS_KEY",
		`headers:{"X-Api-Key":"$ANTH_KEY"}`}
	tests := []struct {
		name, target, body string
		want               string // the refusal; "" when the call goes to good
	}{
		{"host slot", "GET http://$1/v1/status", thiefHost,
			"ERR:http:origin_changed:http://$1!=" + th.URL},
		{"raw slot after the port", "GET " + good.URL + "$$1", "@" + thiefHost + "/x",
			"ERR:http:origin_changed:" + good.URL + "$$1!=" + th.URL},
		{"escaped slot after the port", "GET " + good.URL + "$1", "@" + thiefHost,
			"ERR:http:origin_changed:" + good.URL + "$1!=" + th.URL},
		{"user info slot", "GET http://$$1@" + goodHost + "/", thiefHost + "/#",
			"ERR:http:origin_changed:" + good.URL + "!=" + th.URL},
		{"port slot", "GET http://127.0.0.1:$1/", strings.TrimPrefix(thiefHost, "127.0.0.1:"),
			"ERR:http:origin_changed:http://127.0.0.1:$1!=" + th.URL},
		{"scheme slot", "GET $$1://" + goodHost + "/", "http://" + thiefHost + "/?",
			"ERR:http:origin_changed:$$1://" + goodHost + "!=" + th.URL},
		{"named slot", "GET http://$PREV/", thiefHost, "ERR:http:origin_changed:http://$PREV!=" + th.URL},
		{"rest slot", "GET http://$1+/", thiefHost, "ERR:http:origin_changed:http://$1+!=" + th.URL},
		{"method slot", "$$1 " + good.URL + "/", "GET " + th.URL + "/ x", "ERR:http:origin_changed:" + good.URL + "!=" + th.URL},
		{"raw path slot", "GET " + good.URL + "/$$1", `\@` + thiefHost + "/", ""},
		{"raw path slot, two slashes", "GET " + good.URL + "/$$1", "/" + thiefHost + "/", ""},
		{"raw query slot", "GET " + good.URL + "/?q=$$1", "#@" + thiefHost, ""},
		{"raw fragment slot", "GET " + good.URL + "/#$$1", "@" + thiefHost, ""},
	}
	for _, tt := range tests {
		for _, auth := range auths {
			row := &contract.Row{Key: "K", Type: "http", Target: tt.target, Auth: auth}
			vars := map[string]string{"PREV": thiefHost}
			o := r.Run(context.Background(), runner.Call{Row: row, Body: tt.body, Vars: vars})
			if tt.want == "" {
				if !o.Ran || !o.OK() {
					t.Errorf("%s, %s: %+v; want a call to the row's origin", tt.name, auth, o)
				}
				continue
			}
			if o.Result != tt.want || o.Ran || !errors.Is(o.Err, ErrOriginChanged) {
				t.Errorf("%s, %s: %q (ran %v, %v); want %q", tt.name, auth, o.Result, o.Ran, o.Err, tt.want)
			}
			// Shape mode builds the same request, and is refused the same way.
			if o := r.Run(context.Background(), runner.Call{Row: row, Body: tt.body, Vars: vars, Shape: true}); o.Result != tt.want {
				t.Errorf("%s, %s, shape: %q; want %q", tt.name, auth, o.Result, tt.want)
			}
		}
	}
	if hits, got := thiefGot(th); hits != 0 {
		t.Fatalf("the thief got %d requests: %q", hits, got)
	}
}

// A row without auth may take its host from a slot: a deliberate "fetch any URL"
// capability, which carries no credential to wherever it goes.
func TestRowWithoutAuthMayTakeItsHostFromASlot(t *testing.T) {
	th := newThief(t)
	r := newTestRunner(t, nil)
	row := &contract.Row{Key: "FETCH", Type: "http", Target: "GET http://$1/v1/status"}
	o := r.Run(context.Background(), runner.Call{Row: row, Body: strings.TrimPrefix(th.URL, "http://")})
	if !o.Ran || !o.OK() {
		t.Fatalf("fetch any URL: %+v", o)
	}
	if hits, got := thiefGot(th); hits != 1 || got[0] != "||" {
		t.Fatalf("the upstream got %d requests %q; want one with no credential", hits, got)
	}
}

// FuzzCredentialOrigin: a credentialed row the directory accepts
// (contract.CheckCredentialOrigin) sends every call to its target's literal
// origin, whatever the arguments: Build never refuses it with origin_changed, and
// the URL it builds has that origin. Targets the directory refuses are refused by
// Build unless the arguments leave the origin as written.
func FuzzCredentialOrigin(f *testing.F) {
	for _, s := range [][2]string{
		{"GET https://api.acme.test/v1/$1", `@evil.test/x`},
		{"GET https://api.acme.test/$$1", `\@evil.test/`},
		{"GET https://api.acme.test/$$1", `/evil.test/`},
		{"GET https://api.acme.test?q=$$1", `#@evil.test`},
		{"GET https://api.acme.test#$$1", `@evil.test/`},
		{"GET https://api.acme.test/$$1+", `a|b?c#d@e`},
		{"POST https://api.acme.test:8443/x/$1/$$2", `..|%2e%2e/@evil`},
		{"GET http://$1/v1/status", "evil.test:9999"},
		{"GET https://api.acme.test$$1", "@evil.test/x"},
	} {
		f.Add(s[0], s[1])
	}
	r := newTestRunner(f, nil)
	f.Fuzz(func(t *testing.T, target, body string) {
		row := &contract.Row{Key: "K", Type: "http", Target: target, Auth: "bearer:GROK_API_KEY"}
		req, _, err := r.Build(runner.Call{Row: row, Body: body})
		accepted := contract.CheckCredentialOrigin(row) == nil
		if err != nil {
			if accepted && errors.Is(err, ErrOriginChanged) {
				t.Fatalf("a target the directory accepts was refused: %q with %q: %v", target, body, err)
			}
			return
		}
		_, tmpl := contract.CutHTTPTarget(target)
		want, werr := contract.TemplateOrigin(tmpl)
		u, perr := url.Parse(req.URL)
		if werr != nil || perr != nil || contract.URLOrigin(u) != want {
			t.Fatalf("%q with %q built %q (origin %v), want origin %q (%v)", target, body, req.URL, u, want, werr)
		}
	})
}
