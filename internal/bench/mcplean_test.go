package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// The lean MCP client calls the echo row on a real node's session with an id of
// its own for every call, many at once over its pooled connections, and every
// call leaves its receipt.
func TestMCPLeanInvoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a node")
	}
	ctx := context.Background()
	e, err := StartEnv(ctx, EnvConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cs, err := e.MCPSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	before, err := e.Node.Log().LastSeq(ctx, wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	op, closeLean, err := e.MCPLeanInvoke(cs)
	if err != nil {
		t.Fatal(err)
	}
	defer closeLean()
	const calls = 40
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- op(ctx, i)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	after, err := e.Node.Log().LastSeq(ctx, wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	events := 0 // requests and receipts appended together may share a message
	if err := e.Node.Log().ReadRange(ctx, wire.DataStream, before+1, after, 256, func(b []eventlog.Stored) error {
		events += len(b)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if events < 2*calls { // a request and a receipt each
		t.Errorf("%d calls appended %d events, want at least %d", calls, events, 2*calls)
	}
}

// A numbered raw client writes a fresh id into each request it sends, with the
// extra headers it was given.
func TestRawClientNumbersRequests(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	s := startRawServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen[string(b)] = r.Header.Get("X-Extra") == "yes"
		mu.Unlock()
		io.WriteString(w, "ok")
	})
	body := []byte(`{"id":"n-000000000000"}`)
	c, err := newRawClient(s.URL, "/p", "k", body, 4, "X-Extra", "yes")
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	c.idAt = bytes.Index(c.req, []byte(`"n-`)) + 3
	for i := range 5 {
		if err := c.do(context.Background(), func(int, []byte) error { return nil }); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	for i := 1; i <= 5; i++ {
		if want := fmt.Sprintf(`{"id":"n-%012d"}`, i); !seen[want] {
			t.Errorf("no request %s with its header among %v", want, seen)
		}
	}
}
