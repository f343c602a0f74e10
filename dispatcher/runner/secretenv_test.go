package runner

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/capdir/capdir/contract/failure"
)

func TestParseSecretEnv(t *testing.T) {
	s, err := ParseSecretEnv("GROK_API_KEY, *_TOKEN", "", "ACME_*,lower_key", " * ")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.String(); got != "GROK_API_KEY,*_TOKEN,ACME_*,lower_key,*" {
		t.Errorf("String = %s", got)
	}
	for _, bad := range []string{"**", "*A*", "A*B", "A-B", "$A", "A B", "*_TOKEN,ok,A.B"} {
		if _, err := ParseSecretEnv(bad); !errors.Is(err, ErrBadSecretEnv) || !strings.Contains(err.Error(), "want a variable name") {
			t.Errorf("ParseSecretEnv(%q) = %v", bad, err)
		}
	}
	if s, err := ParseSecretEnv(); err != nil || s.Allows("X_API_KEY") {
		t.Errorf("no pattern: %v %v", s, err)
	}
}

func TestSecretEnvAllows(t *testing.T) {
	def, _ := ParseSecretEnv(DefaultSecretEnv...)
	all, _ := ParseSecretEnv("*")
	some, _ := ParseSecretEnv("GROK_API_KEY,ACME_*,*_PASS")
	tests := []struct {
		name           string
		def, all, some bool
	}{
		{"DEMO_API_KEY", true, true, false},
		{"GROK_API_KEY", true, true, true},
		{"GITHUB_TOKEN", true, true, false},
		{"ACME_SECRET", false, true, true},
		{"DB_PASS", false, true, true},
		{"DB_PASSWORD", false, true, false},
		{"API_KEY", false, true, false}, // "*_API_KEY" needs something before the suffix's "_"
		{"grok_api_key", false, true, false},
		// capdir's own: never, whatever the list.
		{"CAPDIR_TERMINAL_KEY", false, false, false},
		{"CAPDIR_API_KEY", false, false, false},
		{"CAPDIR_SECRET_ENV", false, false, false},
		{"capdir_terminal_key", false, false, false},
		{"HTTPS_PROXY", false, false, false},
		{"http_proxy", false, false, false},
		{"GODEBUG", false, false, false},
		{"PATH", false, false, false},
		{"", false, false, false},
	}
	for _, tt := range tests {
		if got := [3]bool{def.Allows(tt.name), all.Allows(tt.name), some.Allows(tt.name)}; got != [3]bool{tt.def, tt.all, tt.some} {
			t.Errorf("%q: default/all/some = %v, want %v", tt.name, got, [3]bool{tt.def, tt.all, tt.some})
		}
	}
}

// A guarded Env resolves a refused name to nothing, and ApplyAuth fails on it with
// the literal instead of silently sending no credential, in every auth form. The
// breaker's CredentialTag, given the same Env, sees no credential.
func TestGuardRefusesInEveryForm(t *testing.T) {
	base := MapEnv(map[string]string{"CAPDIR_TERMINAL_KEY": "owner-secret", "DB_PASSWORD": "pw", "GOOD_API_KEY": "good"})
	list, _ := ParseSecretEnv("*")
	env := list.Guard(base)
	if v, ok := env("CAPDIR_TERMINAL_KEY"); ok || v == "owner-secret" {
		t.Fatalf("guard resolved the owner key: %q %v", v, ok)
	}
	for _, spec := range []string{
		"bearer:CAPDIR_TERMINAL_KEY", "oauth:$CAPDIR_TERMINAL_KEY", "basic:CAPDIR_TERMINAL_KEY",
		"query:k=CAPDIR_TERMINAL_KEY", `headers:{"X-Leak":"$CAPDIR_TERMINAL_KEY"}`,
		`headers:{"A-First":"$GOOD_API_KEY","X-Leak":"k=$CAPDIR_TERMINAL_KEY"}`,
	} {
		req := OutboundRequest{URL: "https://h/p"}
		cred, err := ApplyAuth(spec, env, &req)
		var e *failure.Error
		if !errors.As(err, &e) || e.Literal != "ERR:auth:env_not_allowed:CAPDIR_TERMINAL_KEY" || !errors.Is(err, ErrEnvNotAllowed) {
			t.Errorf("%s: err = %v", spec, err)
		}
		if cred.Applied() || strings.Contains(req.URL+req.Headers["X-Leak"]+req.Headers["Authorization"], "owner-secret") {
			t.Errorf("%s: applied %v, request %+v", spec, cred, req)
		}
		if tag := CredentialTag(spec, env, "salt"); tag != "" {
			t.Errorf("%s: CredentialTag = %q", spec, tag)
		}
	}
	def, _ := ParseSecretEnv(DefaultSecretEnv...)
	var req OutboundRequest
	if _, err := ApplyAuth("bearer:DB_PASSWORD", def.Guard(base), &req); err == nil || err.Error() != "ERR:auth:env_not_allowed:DB_PASSWORD" {
		t.Errorf("DB_PASSWORD under the default list: %v", err)
	}
	// Allowed names work as before, including an allowed but unset one.
	cred, err := ApplyAuth("bearer:GOOD_API_KEY", def.Guard(base), &req)
	if err != nil || req.Headers["Authorization"] != "Bearer good" || CredentialTag("bearer:GOOD_API_KEY", def.Guard(base), "s") == "" {
		t.Errorf("allowed: %v %v %v", cred, err, req)
	}
	if cred, err := ApplyAuth("bearer:DEMO_API_KEY", def.Guard(base), &OutboundRequest{}); err != nil || cred.Applied() || len(cred.Missing) != 1 {
		t.Errorf("allowed, unset: %v %v", cred, err)
	}
}

func TestAuthVariables(t *testing.T) {
	tests := []struct {
		spec string
		want []string
	}{
		{"", nil},
		{"bearer:A_TOKEN", []string{"A_TOKEN"}},
		{"oauth: $O_TOKEN ", []string{"O_TOKEN"}},
		{"basic:B", []string{"B"}},
		{"query:key=Q_KEY", []string{"Q_KEY"}},
		{`headers:{"x":"$H1 and $H2","a":"lit","b":"$CAPDIR_TERMINAL_KEY"}`, []string{"CAPDIR_TERMINAL_KEY", "H1", "H2"}},
	}
	for _, tt := range tests {
		got, err := AuthVariables(tt.spec)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("AuthVariables(%q) = %v, %v; want %v", tt.spec, got, err, tt.want)
		}
	}
	if _, err := AuthVariables("apikey:X"); !errors.Is(err, ErrAuthUnknownPrefix) {
		t.Errorf("malformed spec: %v", err)
	}
}
