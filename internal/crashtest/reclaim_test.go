//go:build unix

package crashtest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// A call cut by a SIGKILL of `capdir serve` runs again as soon as the node is
// back, not after the ack wait: the node (its ack wait ten minutes, so that only
// the restart can hand the call back) is killed while its worker holds an http
// call to an upstream that does not answer; once restarted, the upstream gets the
// call a second time and answers it, and the caller's retry with the same
// Idempotency-Key is answered 200 with that result, not 202 pending.
func TestKill9CutCallRunsAtRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds capdir and kills it; run without -short")
	}
	bin := capdirBinary(t)
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	held := make(chan struct{})
	up := upstreamtest.Start(t, func(w http.ResponseWriter, r *http.Request) {
		if upstreamtest.Hit(r) == 1 { // held until the node that called is killed
			close(held)
			<-r.Context().Done()
			return
		}
		io.WriteString(w, "ran "+r.URL.Query().Get("b"))
	})
	spawn := func(n int) *Server {
		s, err := Spawn(bin, filepath.Join(dir, "data"), addr, nodetest.Key, filepath.Join(dir, "serve-"+string(rune('0'+n))+".log"), "--ack-wait", "10m")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Kill() })
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.Ready(ctx); err != nil {
			t.Fatal(err)
		}
		return s
	}
	do := func(s *Server, method, path, body string) (int, string, error) {
		req, _ := http.NewRequest(method, s.URL+path, strings.NewReader(body))
		req.Header.Set("x-terminal-key", nodetest.Key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "cut-call-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	s := spawn(1)
	row, _ := json.Marshal(map[string]string{"key": "HELD", "type": "http", "target": "GET " + up.URL + "/?b=$1", "content": "# WHAT: an upstream that holds its first call"})
	if code, body, err := do(s, "PUT", "/api/directory/HELD", string(row)); err != nil || code/100 != 2 {
		t.Fatalf("PUT: %d %s %v", code, body, err)
	}
	cut := make(chan error, 1)
	go func() {
		_, _, err := do(s, "POST", "/api/dispatch", `{"key":"HELD","body":"once"}`)
		cut <- err
	}()
	select {
	case <-held:
	case <-time.After(time.Minute):
		t.Fatalf("the upstream never got the call:\n%s", s.Tail(20))
	}
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := <-cut; err == nil {
		t.Fatal("the dispatch was answered though its node was killed while the upstream held it")
	}

	restarted := time.Now()
	s = spawn(2)
	code, body, err := do(s, "POST", "/api/dispatch", `{"key":"HELD","body":"once"}`)
	t.Logf("crash figures: the retry of the cut call answered %s after the restart began (the new process spawned; ack wait 10m)", time.Since(restarted).Round(time.Millisecond))
	if err != nil || code != 200 || !strings.Contains(body, `ran once"`) {
		t.Fatalf("the retry with the same Idempotency-Key after the restart: %d %s %v; want 200 with the call run again at the start\n%s", code, body, err, s.Tail(20))
	}
	if calls := up.Hits(); calls != 2 {
		t.Fatalf("the upstream got %d calls; want 2 (the cut one, and its run after the restart)", calls)
	}
}
