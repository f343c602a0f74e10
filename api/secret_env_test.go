package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// newRecorder is an upstream that records every request's headers and query.
func newRecorder(t *testing.T) *upstreamtest.Upstream {
	return upstreamtest.Start(t, upstreamtest.Reply(http.StatusOK, `{"status":"ok"}`))
}

// seen is every request up got: its headers as JSON, a space, its query.
func seen(up *upstreamtest.Upstream) []string {
	var out []string
	for _, r := range up.Requests() {
		h, _ := json.Marshal(r.Header)
		out = append(out, string(h)+" "+r.RawQuery)
	}
	return out
}

// secretEnv is the environment the tests' nodes read credentials from: it holds the
// owner key, as a real process environment may.
var secretEnv = runner.MapEnv(map[string]string{
	"CAPDIR_TERMINAL_KEY": nodetest.Key,
	"DB_PASSWORD":         "db-secret-value",
	"DEMO_API_KEY":        "demo-secret-value",
})

const envDoc = `# WHAT: credential test\n# ARGS: none`

// A row may name only the variables the operator allows, and never capdir's own: each
// write route refuses any other with 400, naming the variable and the flag, and
// appends nothing. Allowed names, the README walk-through's among them, still work.
func TestSecretEnvAllowListAtWrite(t *testing.T) {
	up := newRecorder(t)
	row := func(key, auth string) string {
		b, _ := json.Marshal(map[string]string{"key": key, "type": "http", "target": "GET " + up.URL + "/x", "auth": auth, "content": envDoc})
		return string(b)
	}
	leak := `headers:{"X-Leak":"$CAPDIR_TERMINAL_KEY"}`

	// refused runs every write route with auth and expects 400 mentioning want.
	refused := func(t *testing.T, n *capdir.Node, auth string, want ...string) {
		t.Helper()
		if code, body := nodetest.Do(t, n, "POST", "/api/directory", row("OK_ROW", "")); code != 201 && code != 409 {
			t.Fatalf("POST OK_ROW: %d %s", code, body)
		}
		before := nodetest.ControlSeq(t, n)
		authJSON, _ := json.Marshal(auth)
		writes := []struct{ method, path, ctype, body string }{
			{"POST", "/api/directory", "application/json", row("EVIL", auth)},
			{"PUT", "/api/directory/EVIL", "application/json", row("EVIL", auth)},
			{"PUT", "/api/directory/OK_ROW", "application/json", row("OK_ROW", auth)},
			{"PATCH", "/api/directory/OK_ROW", "application/json", `{"auth":` + string(authJSON) + `}`},
			{"POST", "/api/directory/import", "application/x-ndjson", row("EVIL", auth) + "\n"},
			{"POST", "/api/directory/import?mode=upsert", "application/x-ndjson", row("OK_ROW", auth) + "\n"},
		}
		for _, w := range writes {
			code, body := send(t, n, w.method, w.path, w.ctype, w.body)
			wantCode := 400
			if strings.Contains(w.path, "import") {
				wantCode = 200 // per-row failures
				if !strings.Contains(body, `"ok":0`) {
					t.Errorf("%s %s wrote the row: %s", w.method, w.path, body)
				}
			}
			if code != wantCode || !strings.Contains(body, "auth: names the environment variable") {
				t.Errorf("%s %s auth %s: %d %s", w.method, w.path, auth, code, body)
			}
			for _, s := range want {
				if !strings.Contains(body, s) {
					t.Errorf("%s %s auth %s: %s does not say %q", w.method, w.path, auth, body, s)
				}
			}
		}
		if after := nodetest.ControlSeq(t, n); after != before {
			t.Errorf("auth %s: refused writes appended %d events", auth, after-before)
		}
	}

	t.Run("default list", func(t *testing.T) {
		n := nodetest.Start(t, nil, capdir.WithEnv(secretEnv))
		refused(t, n, "bearer:DB_PASSWORD", "DB_PASSWORD", "not on the operator's allow-list (*_API_KEY,*_TOKEN)", "--secret-env '*_API_KEY,*_TOKEN,DB_PASSWORD'")
		refused(t, n, leak, "CAPDIR_TERMINAL_KEY", "capdir's own")
		refused(t, n, "bearer:CAPDIR_API_KEY", "CAPDIR_API_KEY", "capdir's own")
		refused(t, n, "basic:HTTPS_PROXY", "HTTPS_PROXY", "capdir's own")

		// The walk-through's row: DEMO_API_KEY matches *_API_KEY. Shape mode shows
		// the request (credential headers dropped); the upstream gets the credential.
		walk := `{"key":"HEALTH","type":"http","target":"GET ` + up.URL + `/healthz","auth":"bearer:DEMO_API_KEY","content":"# WHAT: this node health, over HTTP"}`
		mustDo(t, n, 201, "POST", "/api/directory", walk)
		code, got := dispatch(t, n, `{"key":"HEALTH","body":"","shape":true}`)
		if shape, _ := got["shape"].(map[string]any); code != 200 || got["ok"] != true || shape["url"] != up.URL+"/healthz" {
			t.Fatalf("walk-through shape: %d %v", code, got)
		}
		if code, got := dispatch(t, n, `{"key":"HEALTH","body":""}`); code != 200 || got["ok"] != true || got["ran"] != true {
			t.Fatalf("walk-through dispatch: %d %v", code, got)
		}
		if r := seen(up); len(r) != 1 || !strings.Contains(r[0], `"Bearer demo-secret-value"`) {
			t.Fatalf("upstream saw %v", r)
		}
	})
	t.Run("every name allowed", func(t *testing.T) {
		n := nodetest.Start(t, func(c *capdir.Config) { c.SecretEnv = []string{"*"} }, capdir.WithEnv(secretEnv))
		refused(t, n, leak, "CAPDIR_TERMINAL_KEY", "capdir's own")
		refused(t, n, "oauth:capdir_terminal_key", "capdir_terminal_key", "capdir's own")
		mustDo(t, n, 201, "POST", "/api/directory", row("DB", "bearer:DB_PASSWORD"))
	})
	t.Run("none allowed", func(t *testing.T) {
		n := nodetest.Start(t, func(c *capdir.Config) { c.SecretEnv = []string{} }, capdir.WithEnv(secretEnv))
		refused(t, n, "bearer:DEMO_API_KEY", "allow-list (none)", "--secret-env 'DEMO_API_KEY'")
		mustDo(t, n, 201, "POST", "/api/directory", row("NO_AUTH", ""))
	})
	t.Run("an explicit list", func(t *testing.T) {
		n := nodetest.Start(t, func(c *capdir.Config) { c.SecretEnv = []string{"DB_PASSWORD", "ACME_*"} }, capdir.WithEnv(secretEnv))
		refused(t, n, "bearer:DEMO_API_KEY", "DEMO_API_KEY", "(DB_PASSWORD,ACME_*)")
		mustDo(t, n, 201, "POST", "/api/directory", row("DB", "basic:DB_PASSWORD"))
		mustDo(t, n, 201, "POST", "/api/directory", row("ACME", `headers:{"x-acme":"$ACME_KEY"}`))
	})
}

// A node refuses to start with a malformed pattern.
func TestSecretEnvBadPattern(t *testing.T) {
	_, err := capdir.Start(context.Background(), capdir.Config{TerminalKey: nodetest.Key, SecretEnv: []string{"*_TOKEN,A-B"}, Log: eventlog.Config{DataDir: t.TempDir()}})
	if err == nil || !strings.Contains(err.Error(), `"A-B": want a variable name`) {
		t.Fatalf("err = %v", err)
	}
}

// A row that never went through the write path (written before the allow-list, or
// appended to the log by another writer) still cannot read capdir's owner key or any
// variable outside the list: the call fails with the literal, before the upstream.
func TestSecretEnvRefusedAtRun(t *testing.T) {
	up := newRecorder(t)
	n := nodetest.Start(t, nil, capdir.WithEnv(secretEnv))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows := map[string]string{
		"LEAK_HEADER": `headers:{"X-Leak":"$CAPDIR_TERMINAL_KEY"}`,
		"LEAK_BEARER": "bearer:CAPDIR_TERMINAL_KEY",
		"LEAK_QUERY":  "query:k=CAPDIR_TERMINAL_KEY",
		"NOT_LISTED":  "basic:DB_PASSWORD",
	}
	for key, auth := range rows {
		smuggle(ctx, t, n, contract.Row{Key: key, Type: "http", Target: "GET " + up.URL + "/x", Auth: auth,
			Content: envDoc, Enabled: 1, PlannerVisible: 1, PlannerRank: 100})
	}
	for key, auth := range rows {
		name := "CAPDIR_TERMINAL_KEY"
		if key == "NOT_LISTED" {
			name = "DB_PASSWORD"
		}
		want := "ERR:http:" + key + ":ERR:auth:env_not_allowed:" + name
		code, got := dispatch(t, n, `{"key":"`+key+`","body":""}`)
		if code != 200 || got["ok"] != false || got["ran"] != false || got["result"] != want {
			t.Errorf("%s (%s): %d %v, want %q", key, auth, code, got, want)
		}
		if st := got["proof"].(map[string]any)["status"]; st != "FAILED_BEFORE_RUN" {
			t.Errorf("%s: status %v", key, st)
		}
	}
	for _, r := range seen(up) {
		if strings.Contains(r, nodetest.Key) || strings.Contains(r, base64.StdEncoding.EncodeToString([]byte("db-secret-value:"))) {
			t.Errorf("the upstream received a refused variable: %s", r)
		}
	}
	if r := seen(up); len(r) != 0 {
		t.Errorf("the upstream was called %d times", len(r))
	}
}
