//go:build unix

package e2e_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner"
	"github.com/capdir/capdir/internal/nodetest"
)

// The reference MCP server, @modelcontextprotocol/server-everything from npm, is
// installed by .ci/run into $CAPDIR_NPM_DIR (default ~/.cache/capdir-npm). Its
// tests skip, saying so, where it is not installed, and fail instead when
// CAPDIR_REQUIRE_NPM=1 (as .ci/run sets it).

// everythingBin is the installed server's launcher.
func everythingBin(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CAPDIR_NPM_DIR")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "capdir-npm")
	}
	bin := filepath.Join(dir, "node_modules", ".bin", "mcp-server-everything")
	_, err := os.Stat(bin)
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err != nil {
		msg := "the reference MCP server is not installed (" + err.Error() + "): .ci/run installs it, or run " +
			"npm install --prefix " + dir + " @modelcontextprotocol/server-everything (the version .ci/run pins)"
		if os.Getenv("CAPDIR_REQUIRE_NPM") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// startEverythingHTTP runs the server over streamable HTTP on a free loopback
// port; kill ends its process.
func startEverythingHTTP(t *testing.T) (endpoint string, kill func()) {
	bin := everythingBin(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	kill = func() {
		once.Do(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
	}
	t.Cleanup(kill)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reference server never listened on %s", addr)
		}
	}
	return "http://" + addr + "/mcp", kill
}

// inFlight is a proxy in front of an upstream that closes called once a
// request naming tool has passed through it.
func inFlight(t *testing.T, upstream, tool string) (endpoint string, called <-chan struct{}) {
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{})
	var once sync.Once
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	proxy.FlushInterval = -1
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"name":"`+tool+`"`)) {
			once.Do(func() { close(ch) })
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL + u.Path, ch
}

// checkEverything imports the reference server's tools as rows and calls them
// through POST /api/dispatch and capdir's own /mcp.
func checkEverything(t *testing.T, n *capdir.Node) {
	t.Helper()
	row := waitRow(t, n, "EVERYTHING_ECHO", true)
	if !strings.Contains(row, `"target":"everything/echo"`) || !strings.Contains(row, `"input_schema"`) {
		t.Fatalf("the echo tool's row: %s", row)
	}
	waitRow(t, n, "EVERYTHING_GET-SUM", true)
	_, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"EVERYTHING_ECHO","body":{"message":"hello"}}`)
	if !strings.Contains(body, `"result":"Echo: hello"`) {
		t.Fatalf("echo through POST /api/dispatch: %s", body)
	}
	_, body = nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"EVERYTHING_GET-SUM","body":{"a":2,"b":3}}`)
	if !strings.Contains(body, `"ok":true`) || !strings.Contains(body, "5") {
		t.Fatalf("get-sum through POST /api/dispatch: %s", body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "capdir-everything-test", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: n.URL() + "/mcp", HTTPClient: &http.Client{Transport: keyTransport{}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "EVERYTHING_ECHO", Arguments: map[string]any{"message": "via-mcp"}})
	if err != nil || res.IsError || !strings.Contains(mcpText(res), "Echo: via-mcp") {
		t.Fatalf("echo through capdir's /mcp: %v %+v %q", err, res, mcpText(res))
	}
}

// callKilled calls the long-running tool, kills the upstream once the call is
// in flight, and checks the caller gets the unreachable literal.
func callKilled(t *testing.T, n *capdir.Node, called <-chan struct{}, kill func()) {
	t.Helper()
	go func() {
		select {
		case <-called:
			kill()
		case <-time.After(60 * time.Second):
		}
	}()
	_, body := nodetest.Do(t, n, "POST", "/api/dispatch",
		`{"key":"EVERYTHING_TRIGGER-LONG-RUNNING-OPERATION","body":{"duration":120,"steps":120}}`)
	if !strings.Contains(body, `"result":"ERR:mcp:everything:unreachable:`) {
		t.Fatalf("an upstream killed mid-call: %s", body)
	}
}

// The reference server over streamable HTTP: its tools are rows, called through
// POST /api/dispatch and capdir's /mcp; killed mid-call, the call fails with
// ERR:mcp:everything:unreachable:<reason>.
func TestEverythingOverStreamableHTTP(t *testing.T) {
	upstream, kill := startEverythingHTTP(t)
	endpoint, called := inFlight(t, upstream, "trigger-long-running-operation")
	n := nodetest.Start(t, func(c *capdir.Config) {
		c.MCPUpstreams = mcprunner.Static{"everything": {Name: "everything", URL: endpoint}}
	})
	checkEverything(t, n)
	callKilled(t, n, called, kill)
}

// The reference server over stdio, started by the node: the same rows and
// calls; the process does not see capdir's own variables (its get-env tool
// prints its environment); killed mid-call, the unreachable literal.
func TestEverythingOverStdio(t *testing.T) {
	bin := everythingBin(t)
	t.Setenv("CAPDIR_TERMINAL_KEY", nodetest.Key)
	dir := t.TempDir()
	seen, pidFile := filepath.Join(dir, "requests.log"), filepath.Join(dir, "pid")
	// In a process group of its own (setsid), the shell records its pid (the
	// group's) and copies what the node sends into seen on its way to the server.
	script := `echo $$ > "$3"; tee -a "$1" | "$2" stdio`
	n := nodetest.Start(t, func(c *capdir.Config) {
		c.MCPUpstreams = mcprunner.Static{"everything": {Name: "everything", Command: []string{"setsid", "sh", "-c", script, "sh", seen, bin, pidFile}}}
	})
	checkEverything(t, n)
	_, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"EVERYTHING_GET-ENV","body":""}`)
	if !strings.Contains(body, `"ok":true`) || !strings.Contains(body, "PATH") || strings.Contains(body, nodetest.Key) || strings.Contains(body, "CAPDIR_TERMINAL_KEY") {
		t.Fatalf("the stdio server's environment: %.600s", body)
	}
	called := make(chan struct{})
	go func() {
		defer close(called)
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if b, _ := os.ReadFile(seen); bytes.Contains(b, []byte("trigger-long-running-operation")) {
				return
			}
		}
	}()
	callKilled(t, n, called, func() {
		b, _ := os.ReadFile(pidFile)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
			syscall.Kill(-pid, syscall.SIGKILL) // the group: the shell, tee and the server
		}
	})
}
