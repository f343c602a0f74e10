package e2e_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/projector"
	"github.com/nats-io/nats.go"
)

// heldFold holds a node's control-stream fold after one batch until the node asks
// the log for a key's last mutation (a direct get on the control stream, seen by a
// subscriber of its own): while held, the node's projection is behind the log, and
// only a node that looks at the log before it answers gets past it.
type heldFold struct {
	sniff   *nats.Conn
	mu      sync.Mutex
	armed   bool          // hold after the next control batch
	free    chan struct{} // closed to end the hold; nil when there is none
	holding chan struct{} // receives once the fold is held
	fenced  chan struct{} // receives when the subscriber sees the fence lookup
}

// fenceSubject is a lookup only the test makes (no row has the key).
var fenceSubject = "$JS.API.DIRECT.GET." + wire.ControlStream + "." + wire.DirectorySubject("RYW_FENCE")

func holdFolds(t *testing.T, n *capdir.Node, sniff *nats.Conn) *heldFold {
	t.Helper()
	h := &heldFold{sniff: sniff, holding: make(chan struct{}, 1), fenced: make(chan struct{}, 1)}
	n.Projector().OnApplied(func(stream string, _ []eventlog.Stored) {
		if stream != wire.ControlStream {
			return
		}
		h.mu.Lock()
		hold, free := h.armed, h.free
		h.armed = false
		h.mu.Unlock()
		if hold {
			h.holding <- struct{}{}
			<-free
		}
	})
	// Every node's lookup reaches this subscriber too; only the held node looks
	// while a hold is armed.
	sub, err := sniff.Subscribe("$JS.API.DIRECT.GET."+wire.ControlStream+".>", func(m *nats.Msg) {
		if m.Subject == fenceSubject {
			h.fenced <- struct{}{}
			return
		}
		h.release()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sub.Unsubscribe()
		h.release()
	})
	return h
}

// arm holds the fold after the next control batch the node applies. It first
// waits until the subscriber has seen every lookup made before it: a node's
// write may look up its key twice (once to tell its own earlier copy from
// another's, once to settle the key), and the subscriber's copy of the second
// may arrive after the step that made it has ended; taken then, it would end
// the next step's hold before that step's write is asked about.
func (h *heldFold) arm(t *testing.T) {
	t.Helper()
	// The server hands the fence to the subscriber after every lookup it
	// handled before it, and the subscriber sees them in that order.
	if _, err := h.sniff.Request(fenceSubject, nil, 10*time.Second); err != nil {
		t.Fatalf("fence lookup: %v", err)
	}
	select {
	case <-h.fenced:
	case <-time.After(10 * time.Second):
		t.Fatal("the subscriber did not see the fence lookup")
	}
	h.mu.Lock()
	h.armed, h.free = true, make(chan struct{})
	h.mu.Unlock()
}

// release ends the hold (and disarms one not yet taken).
func (h *heldFold) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.free != nil {
		close(h.free)
	}
	h.armed, h.free = false, nil
}

// A write acknowledged by node A is seen by the next request to node B of the
// same log, even while B's projection has not folded it: B's fold is held behind
// the log (after a batch of an unrelated row, until B asks the log about a key),
// the write is made on A, B's projection is shown not to hold it, and then B is
// asked. B answers from the log's last mutation of the key, not from its lagging
// projection: a GET finds the row, a PATCH and a PUT apply to it (not 404, not
// 409), a POST of it is 409 exists, and after a DELETE on A a POST on B creates it
// again.
func TestReadYourWriteAcrossNodes(t *testing.T) {
	var bCreds string
	a := nodetest.Start(t, func(c *capdir.Config) {
		c.Log.Listen = freePort(t)
		c.Name = "node-a"
		bCreds = addBusIdentity(t, c.Log.DataDir, "node-b", eventlog.RoleNode)
	})
	b := nodetest.Start(t, func(c *capdir.Config) {
		c.Log.NATSURL = a.Log().ClientURL()
		c.Log.Creds = bCreds
		c.Name = "node-b"
	})
	h := holdFolds(t, b, a.Log().Conn())
	fill := 0
	// behind makes B's projection lag the log, then runs write on A.
	behind := func(write func()) {
		t.Helper()
		h.arm(t)
		fill++
		tokRow(t, a, map[string]any{"key": "FILL_" + strconv.Itoa(fill), "type": "fn", "target": "echo"})
		select {
		case <-h.holding:
		case <-time.After(10 * time.Second):
			t.Fatal("B's fold was not held")
		}
		write()
	}
	created := func(key string) {
		behind(func() { tokRow(t, a, map[string]any{"key": key, "type": "fn", "target": "echo"}) })
		if _, _, err := b.Projector().Row(key); !errors.Is(err, projector.ErrNotFound) {
			t.Fatalf("B's projection holds %s while held behind (%v): the test would prove nothing", key, err)
		}
	}
	must := func(what string, code int, body string, want int, has string) {
		t.Helper()
		h.release() // a node that answered without looking at the log is held still
		if code != want || !strings.Contains(body, has) {
			t.Errorf("%s on B: %d %s; want %d with %q", what, code, body, want, has)
		}
	}

	created("RYW_GET")
	code, body := nodetest.Do(t, b, "GET", "/api/directory/RYW_GET", "")
	must("GET of a row created on A", code, body, 200, `"key":"RYW_GET"`)

	created("RYW_PATCH")
	code, body = nodetest.Do(t, b, "PATCH", "/api/directory/RYW_PATCH", `{"category":"patched"}`)
	must("PATCH of a row created on A", code, body, 200, `"ok":true`)

	created("RYW_PUT")
	row, _ := json.Marshal(map[string]any{"type": "fn", "target": "echo", "category": "put",
		"content": "# WHAT: Say something back.\n# ARGS: $1=text\n# EX: [RYW_PUT]x[/RYW_PUT]"})
	code, body = nodetest.Do(t, b, "PUT", "/api/directory/RYW_PUT", string(row))
	must("PUT of a row created on A", code, body, 200, `"ok":true`)

	created("RYW_POST")
	row, _ = json.Marshal(map[string]any{"key": "RYW_POST", "type": "fn", "target": "echo",
		"content": "# WHAT: Say something back.\n# ARGS: $1=text\n# EX: [RYW_POST]x[/RYW_POST]"})
	code, body = nodetest.Do(t, b, "POST", "/api/directory", string(row))
	must("POST of a row created on A", code, body, 409, "exists")

	behind(func() {
		if code, body := nodetest.Do(t, a, "DELETE", "/api/directory/RYW_POST", ""); code != 200 {
			t.Fatalf("DELETE on A: %d %s", code, body)
		}
	})
	if _, _, err := b.Projector().Row("RYW_POST"); err != nil {
		t.Fatalf("B's projection lost RYW_POST while held behind (%v): the test would prove nothing", err)
	}
	code, body = nodetest.Do(t, b, "POST", "/api/directory", string(row))
	must("POST of a row deleted on A", code, body, 201, `"ok":true`)

	for _, key := range []string{"RYW_GET", "RYW_PATCH", "RYW_PUT", "RYW_POST"} {
		if code, body := nodetest.Do(t, a, "GET", "/api/directory/"+key, ""); code != 200 {
			t.Errorf("GET %s on A: %d %s", key, code, body)
		}
	}
	if code, body := nodetest.Do(t, a, "GET", "/api/directory/RYW_PATCH", ""); !strings.Contains(body, `"category":"patched"`) {
		t.Errorf("B's PATCH is not in A's row: %d %s", code, body)
	}
}
