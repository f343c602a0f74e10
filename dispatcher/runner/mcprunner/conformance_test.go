package mcprunner

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner/mcptest"
	"github.com/capdir/capdir/dispatcher/runner/runnertest"
)

// mcpRow is an mcp row on target with content.
func mcpRow(target, content string) *contract.Row {
	return &contract.Row{Key: "R", Type: contract.TypeFn, Runner: RunnerMCP, Target: target, Content: content}
}

// deadURL is the address of a server that is no longer there.
func deadURL() string {
	hs := httptest.NewServer(nil)
	hs.Close()
	return hs.URL
}

func TestConformance(t *testing.T) {
	_, hs := mcptest.Server(t)
	ups := Static{
		"up":   {Name: "up", URL: hs.URL},
		"sec":  {Name: "sec", URL: hs.URL, Auth: "bearer:" + runnertest.SecretVar},
		"down": {Name: "down", URL: deadURL()},
	}
	secret := mcpRow("sec/headers", "")
	secret.Auth = "bearer:" + runnertest.SecretVar // a row's auth is not applied
	runnertest.Run(t, runnertest.Harness{
		Name: RunnerMCP,
		New: func(t testing.TB, cfg runnertest.Config) runner.Runner {
			r, err := New(Config{Upstreams: ups, Env: cfg.Env, Limits: cfg.Limits})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(r.Stop)
			return r
		},
		Echo:    mcpRow("up/echo", ""),
		Block:   mcpRow("up/block", ""),
		Large:   mcpRow("up/big", ""),
		Secrets: []*contract.Row{secret, mcpRow("sec/echo", `{"args":"$1+"}`)},
		Amplify: []*contract.Row{mcpRow("up/echo", `{"a":"`+strings.Repeat("$1", 1000)+`"}`)},
		Failures: []*contract.Row{
			mcpRow("", ""), mcpRow("up", ""), mcpRow("up/ echo", ""), mcpRow("nobody/echo", ""),
			mcpRow("down/echo", ""), mcpRow("up/fail", ""), mcpRow("up/nope", ""), mcpRow("up/echo", "[1]"),
		},
		Elsewhere:     map[string]string{"ERR:mcp:<server>:timeout:<tool>": "TestHostileUpstreams"},
		Sentinels:     Sentinels,
		Timeout:       ErrTimeout,
		TimeoutPrefix: "ERR:mcp:up:timeout:",
	})
}
