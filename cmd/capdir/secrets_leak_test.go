package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// The CLI prints what the node answers and nothing of a credential: rows whose
// upstream echoes the credential it got (in its answer, in a 401), invoked with
// the owner key and with a capability token, as a result, --json and --shape,
// then the breaker list and an export. Nothing printed, on stdout or stderr, and
// no error holds the value in any form; the upstream did get it. The node-wide
// test of every other entry point is TestSecretsNeverLeaveTheirOrigin in package
// capdir.
func TestInvokeNeverPrintsASecret(t *testing.T) {
	raw := make([]byte, 8)
	rand.Read(raw)
	secret := "s3cr3t-" + hex.EncodeToString(raw) + `-cli a b&c<d>"e' /?~>`
	secrets := []nodetest.Secret{{Name: "CLI_API_KEY", Value: secret}, {Name: "the owner key", Value: nodetest.Key}}

	echo, deny := upstreamtest.EchoRequest(http.StatusOK), upstreamtest.EchoRequest(http.StatusUnauthorized)
	up := upstreamtest.Start(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/deny") {
			deny(w, r)
			return
		}
		echo(w, r)
	})

	n := nodetest.Start(t, func(c *capdir.Config) {
		c.SecretEnv = []string{"CLI_API_KEY"}
		c.Breaker = breaker.Config{Threshold: 1}
	}, capdir.WithEnv(func(name string) (string, bool) { return secret, name == "CLI_API_KEY" }))
	t.Setenv("CAPDIR_TERMINAL_KEY", nodetest.Key)
	for key, row := range map[string]string{
		"ECHO":  `"auth":"bearer:CLI_API_KEY","target":"POST ` + up.URL + `/echo?q=$1","content":"# WHAT: echo\n{\"arg\":\"$1\"}"`,
		"QUERY": `"auth":"query:key=CLI_API_KEY","target":"GET ` + up.URL + `/echo?q=$1","content":"# WHAT: echo"`,
		"DENY":  `"auth":"bearer:CLI_API_KEY","target":"GET ` + up.URL + `/deny","content":"# WHAT: refuses"`,
	} {
		if code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"`+key+`","type":"http","category":"cli",`+row+`}`); code != 201 {
			t.Fatalf("POST %s: %d %s", key, code, body)
		}
	}
	code, body := nodetest.Do(t, n, "POST", "/api/tokens", `{"sub":"cli","scope":{"categories":["cli"]}}`)
	var minted struct{ Token string }
	if json.Unmarshal([]byte(body), &minted); code != 201 || minted.Token == "" {
		t.Fatalf("mint: %d %s", code, body)
	}

	srv := []string{"--server", n.URL()}
	var printed bytes.Buffer
	for _, args := range [][]string{
		{"invoke", "ECHO", "x"}, {"invoke", "ECHO", "x", "--json"}, {"invoke", "ECHO", "x", "--shape"},
		{"invoke", "QUERY", "x"}, {"invoke", "QUERY", "x", "--json"}, {"invoke", "QUERY", "x", "--shape"},
		{"invoke", "ECHO", "x", "--token", minted.Token}, {"invoke", "QUERY", "x", "--token", minted.Token, "--json"},
		{"invoke", "DENY", "x"}, {"invoke", "DENY", "x", "--json"}, {"invoke", "DENY", "x", "--token", minted.Token},
		{"breaker", "list"}, {"breaker", "list", "--json"}, {"export"},
	} {
		stdout, stderr, err := runCLI(t, "", append(args, srv...)...)
		cmdline := "capdir " + strings.ReplaceAll(strings.Join(args, " "), minted.Token, "<token>")
		fmt.Fprintf(&printed, "$ %s\n%s%s%v\n", cmdline, stdout, stderr, err)
		if leaks := nodetest.FindSecrets(cmdline, []byte(stdout+stderr+fmt.Sprint(err)), secrets); len(leaks) > 0 {
			t.Errorf("%v\n%s%s", leaks, stdout, stderr)
		}
	}
	out := printed.String()
	if !strings.Contains(out, `\"Authorization\":[\"Bearer REDACTED\"]`) || !strings.Contains(out, "key=REDACTED") ||
		!strings.Contains(out, "ERR:breaker_open:DENY") {
		t.Errorf("the upstream's echoes, redacted, and the open breaker should be printed:\n%s", out)
	}
	var got []string // what the upstream received: the Authorization and the URL
	for _, r := range up.Requests() {
		got = append(got, r.Header.Get("Authorization"), r.RequestURI)
	}
	sent := strings.Join(got, "\n")
	if !strings.Contains(sent, "Bearer "+secret) || !strings.Contains(sent, "key="+url.QueryEscape(secret)) {
		t.Errorf("the upstream did not receive the credential:\n%s", sent)
	}
}
