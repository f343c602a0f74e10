package e2e_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

// The keyless views of a receipt (GET /receipt/{id}, ?confirm=) name no caller:
// neither the actor (token:<sub> over HTTP, nats:<client> from the bus) nor the
// trace the call carried. The owner's view keeps both.
func TestPublicReceiptNamesNoCaller(t *testing.T) {
	w := newIdemWorld(t, 0, false)
	n := w.g.n
	holder := w.dispatch(t, "", `{"key":"IDEM","body":"x"}`, bearerHeader(busToken(t, n, "agent-7", "IDEM")))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c1 := w.g.connect(t, "c1").nc
	bus, err := wire.Invoke(ctx, c1, "c1", "IDEM", "y", wire.WithToken(busToken(t, n, "c1-agent", "IDEM")))
	if err != nil || !bus.OK {
		t.Fatalf("bus call: %+v, %v", bus, err)
	}
	tokenless, err := wire.Invoke(ctx, c1, "c1", "IDEM", "z") // refused: its receipt names the client
	if err != nil || tokenless.Status != wire.StatusRefusedToken {
		t.Fatalf("bus call without a token: %+v, %v", tokenless, err)
	}
	for _, tc := range []struct{ inv, actor string }{
		{holder.Proof.InvocationID, "token:agent-7"},
		{bus.InvocationID, "token:c1-agent"},
		{tokenless.InvocationID, "nats:c1"},
	} {
		var owner wire.Receipt
		code, out := nodetest.Do(t, n, "GET", "/api/receipts/"+tc.inv, "")
		if code != 200 || json.Unmarshal([]byte(out), &owner) != nil || owner.Actor != tc.actor || owner.Trace == "" {
			t.Fatalf("the owner's view of %s: %d %s; want actor %s and the trace", tc.inv, code, out, tc.actor)
		}
		for _, path := range []string{"/receipt/" + tc.inv, "/api/dispatch?confirm=" + tc.inv} {
			code, out := nodetest.DoKey(t, n, "GET", path, "", "")
			var m map[string]any
			if code != 200 || json.Unmarshal([]byte(out), &m) != nil || m["invocation_id"] != tc.inv {
				t.Fatalf("GET %s: %d %s", path, code, out)
			}
			_, hasActor := m["actor"]
			_, hasTrace := m["trace"]
			if hasActor || hasTrace || strings.Contains(out, tc.actor) || strings.Contains(out, owner.Trace) ||
				strings.Contains(out, "agent") || strings.Contains(out, "nats:") {
				t.Fatalf("GET %s names the caller: %s", path, out)
			}
		}
	}
}
