package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestApplyAuth(t *testing.T) {
	env := MapEnv(map[string]string{
		"GROK_API_KEY": "xai-secret",
		"USER_PASS":    "alice:pw",
		"MAPS_KEY":     "k y&z",
		"ANTH_KEY":     "sk-ant",
		"OAUTH_TOKEN":  "ya29.tok",
		"EMPTY":        "",
	})
	tests := []struct {
		name        string
		spec        string
		url         string
		wantHeaders map[string]string
		wantURL     string
		wantApplied bool
		wantMissing []string
		wantErr     string
	}{
		{name: "empty", spec: "", wantApplied: false},
		{name: "blank", spec: "   ", wantApplied: false},
		{name: "bearer", spec: "bearer:GROK_API_KEY",
			wantHeaders: map[string]string{"Authorization": "Bearer xai-secret"}, wantApplied: true},
		{name: "bearer case-insensitive prefix", spec: "Bearer: GROK_API_KEY",
			wantHeaders: map[string]string{"Authorization": "Bearer xai-secret"}, wantApplied: true},
		{name: "bearer missing", spec: "bearer:NOPE", wantMissing: []string{"NOPE"}},
		{name: "bearer empty value", spec: "bearer:EMPTY", wantMissing: []string{"EMPTY"}},
		{name: "oauth", spec: "oauth:OAUTH_TOKEN",
			wantHeaders: map[string]string{"Authorization": "Bearer ya29.tok"}, wantApplied: true},
		{name: "basic", spec: "basic:USER_PASS",
			wantHeaders: map[string]string{"Authorization": "Basic YWxpY2U6cHc6"}, wantApplied: true},
		{name: "query", spec: "query:key=MAPS_KEY", url: "https://h/p?a=1",
			wantURL: "https://h/p?a=1&key=k+y%26z", wantApplied: true},
		{name: "query no existing query", spec: "query:key=MAPS_KEY", url: "https://h/p#top",
			wantURL: "https://h/p?key=k+y%26z#top", wantApplied: true},
		{name: "query missing", spec: "query:key=NOPE", url: "https://h/p", wantURL: "https://h/p",
			wantMissing: []string{"NOPE"}},
		{name: "headers", spec: `headers:{"x-api-key":"$ANTH_KEY","anthropic-version":"2023-06-01","x-combo":"$ANTH_KEY/$GROK_API_KEY"}`,
			wantHeaders: map[string]string{"x-api-key": "sk-ant", "anthropic-version": "2023-06-01", "x-combo": "sk-ant/xai-secret"},
			wantApplied: true},
		{name: "headers missing omitted", spec: `headers:{"x-api-key":"$NOPE","x-both":"$ANTH_KEY $NOPE2"}`,
			wantHeaders: map[string]string{}, wantMissing: []string{"NOPE", "NOPE2"}},
		{name: "unknown prefix", spec: "apikey:GROK_API_KEY", wantErr: "ERR:auth:unknown_prefix:apikey"},
		{name: "no colon", spec: "GROK_API_KEY", wantErr: "ERR:auth:unknown_prefix:GROK_API_KEY"},
		{name: "bad headers json", spec: "headers:{nope", wantErr: "ERR:auth:bad_spec:headers:invalid character 'n' looking for beginning of object key string"},
		{name: "query without param", spec: "query:MAPS_KEY", wantErr: "ERR:auth:bad_spec:query:want param=ENV"},
		{name: "bearer without name", spec: "bearer:", wantErr: "ERR:auth:bad_spec:bearer:missing variable name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &OutboundRequest{Method: "GET", URL: tt.url}
			cred, err := ApplyAuth(tt.spec, env, req)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantHeaders != nil && !reflect.DeepEqual(orEmpty(req.Headers), tt.wantHeaders) {
				t.Errorf("headers = %v, want %v", req.Headers, tt.wantHeaders)
			}
			if tt.wantURL != "" && req.URL != tt.wantURL {
				t.Errorf("url = %s, want %s", req.URL, tt.wantURL)
			}
			if cred.Applied() != tt.wantApplied {
				t.Errorf("Applied = %v, want %v", cred.Applied(), tt.wantApplied)
			}
			if !reflect.DeepEqual(cred.Missing, tt.wantMissing) {
				t.Errorf("Missing = %v, want %v", cred.Missing, tt.wantMissing)
			}
			if (cred.Tag("salt") != "") != tt.wantApplied {
				t.Errorf("Tag = %q with Applied %v", cred.Tag("salt"), tt.wantApplied)
			}
			if s := cred.String(); strings.Contains(s, "secret") || strings.Contains(s, "sk-ant") {
				t.Errorf("String leaks a value: %s", s)
			}
		})
	}
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func TestApplyAuthErrorsMatch(t *testing.T) {
	_, err := ApplyAuth("apikey:X", MapEnv(nil), &OutboundRequest{})
	if !errors.Is(err, ErrAuthUnknownPrefix) {
		t.Fatalf("errors.Is(%v, ErrAuthUnknownPrefix) = false", err)
	}
	_, err = ApplyAuth("headers:[", MapEnv(nil), &OutboundRequest{})
	if !errors.Is(err, ErrAuthBadSpec) {
		t.Fatalf("errors.Is(%v, ErrAuthBadSpec) = false", err)
	}
}

func TestCredentialSecretsCoverWireForms(t *testing.T) {
	env := MapEnv(map[string]string{"P": "a b", "U": "user"})
	req := &OutboundRequest{URL: "https://h/"}
	cred, err := ApplyAuth("query:k=P", env, req)
	if err != nil {
		t.Fatal(err)
	}
	got := RedactDeep(req.URL, cred.Secrets())
	if got != "https://h/?k=REDACTED" {
		t.Errorf("redacted url = %v", got)
	}
	cred, _ = ApplyAuth("basic:U", env, req)
	s := cred.Secrets()
	for _, want := range []string{"dXNlcjo%3D", "dXNlcjo=", "user", "dxnlcjo=", `\u0064\u0058\u004e\u006c\u0063\u006a\u006f\u003d`} {
		if !slices.Contains(s, want) {
			t.Errorf("Secrets = %q, without %q", s, want)
		}
	}
	for i := 1; i < len(s); i++ {
		if len(s[i]) > len(s[i-1]) {
			t.Errorf("Secrets = %q, not longest first", s)
		}
	}
}

// An upstream that echoes a header in JSON escapes '"', '&', '<' and '>' in it; the
// escaped forms are scrubbed too.
func TestCredentialSecretsCoverJSONEchoes(t *testing.T) {
	const v = `Zq"e&y<>`
	env := MapEnv(map[string]string{"K": v})
	for _, spec := range []string{"bearer:K", `headers:{"x-api-key":"$K"}`} {
		req := &OutboundRequest{}
		cred, err := ApplyAuth(spec, env, req)
		if err != nil {
			t.Fatal(err)
		}
		echo, _ := json.Marshal(req.Headers)
		var plain strings.Builder
		enc := json.NewEncoder(&plain)
		enc.SetEscapeHTML(false)
		enc.Encode(req.Headers)
		rd := NewRedactor(cred.Secrets())
		for _, out := range []string{rd.Scrub(string(echo)), rd.Scrub(plain.String())} {
			if strings.Contains(out, "Zq") {
				t.Errorf("%s: echo scrubbed to %s", spec, out)
			}
		}
	}
}

func TestCredentialTag(t *testing.T) {
	tag := func(v string) string {
		c, err := ApplyAuth("bearer:K", MapEnv(map[string]string{"K": v}), &OutboundRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return c.Tag("salt-1")
	}
	a, b, c := tag("v1"), tag("v1"), tag("v2")
	if len(a) != 4 || a != b {
		t.Fatalf("tags %q %q: want equal, 4 hex chars", a, b)
	}
	if a == c {
		t.Errorf("rotated credential kept tag %q", a)
	}
	cr, _ := ApplyAuth("bearer:K", MapEnv(map[string]string{"K": "v1"}), &OutboundRequest{})
	if cr.Tag("salt-2") == a {
		t.Errorf("tag does not depend on salt")
	}
}

func ExampleApplyAuth() {
	env := MapEnv(map[string]string{"GROK_API_KEY": "xai-123"})
	req := &OutboundRequest{Method: "GET", URL: "https://api.x.ai/v1/models"}
	cred, err := ApplyAuth("bearer:GROK_API_KEY", env, req)
	fmt.Println(err, cred.Names, cred.Applied(), len(cred.Tag("salt")))
	fmt.Println(req.Headers["Authorization"])

	// A missing variable is not an error: the request goes out without a credential.
	req = &OutboundRequest{Method: "GET", URL: "https://api.x.ai/v1/models"}
	cred, err = ApplyAuth("bearer:ABSENT_KEY", env, req)
	fmt.Println(err, cred.Missing, cred.Applied(), len(req.Headers))

	_, err = ApplyAuth("apikey:GROK_API_KEY", env, req)
	fmt.Println(err)
	// Output:
	// <nil> [GROK_API_KEY] true 4
	// Bearer xai-123
	// <nil> [ABSENT_KEY] false 0
	// ERR:auth:unknown_prefix:apikey
}
