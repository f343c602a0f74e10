package e2e_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

// Two bus clients choose the same invocation id, by a call and by a published
// request, each first in turn: each gets its own call's receipt (the second
// under the id scoped to it), sending it again gets that same receipt, and
// neither ever gets the other's.
func TestBusClientsChoosingOneIDEachGetTheirOwnReceipt(t *testing.T) {
	w := newIdemWorld(t, idemWindow, false)
	n := w.g.n
	conn := map[string]*busClient{"c1": w.g.connect(t, "c1"), "c2": w.g.connect(t, "c2")}
	tok := map[string]wire.InvokeOption{
		"c1": wire.WithToken(busToken(t, n, "c1-agent", "IDEM")),
		"c2": wire.WithToken(busToken(t, n, "c2-agent", "IDEM")),
	}
	send := func(how, client, id string) (wire.Receipt, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		body, opts := "from-"+client, []wire.InvokeOption{tok[client], wire.WithInvocationID(id)}
		if how == "call" {
			return wire.Call(ctx, conn[client].nc, client, "IDEM", body, opts...)
		}
		return wire.Invoke(ctx, conn[client].nc, client, "IDEM", body, opts...)
	}
	for _, c := range []struct{ how, first, second string }{
		{"call", "c1", "c2"},
		{"publish", "c2", "c1"},
	} {
		t.Run(c.how, func(t *testing.T) {
			id := wire.NewInvocationID(time.Now())
			got := map[string]wire.Receipt{}
			for _, client := range []string{c.first, c.second} {
				rc, err := send(c.how, client, id)
				if err != nil || !rc.OK || !strings.Contains(rc.Result, `"q":"from-`+client+`"`) {
					t.Fatalf("%s's %s under %s: %+v %s, %v; want its own call's receipt", client, c.how, id, rc.ReceiptSummary, rc.Result, err)
				}
				got[client] = rc
			}
			if got[c.first].InvocationID != id || got[c.second].InvocationID != wire.ScopedInvocationID(c.second, id) {
				t.Fatalf("ids %s and %s; want %s for the first, scoped for the second", got[c.first].InvocationID, got[c.second].InvocationID, id)
			}
			hits := w.up.Hits()
			for _, how := range []string{"call", "publish"} {
				for _, client := range []string{c.second, c.first} {
					rc, err := send(how, client, id)
					if want := got[client]; err != nil || rc.InvocationID != want.InvocationID || rc.Trace != want.Trace || rc.Result != want.Result {
						t.Fatalf("%s's %s again: %+v %s, %v; want its own first receipt %+v %s", client, how, rc.ReceiptSummary, rc.Result, err, want.ReceiptSummary, want.Result)
					}
				}
			}
			if h := w.up.Hits(); h != hits {
				t.Fatalf("sending again ran %d calls", h-hits)
			}
			for _, inv := range []string{got[c.first].InvocationID, got[c.second].InvocationID} {
				if rcs := nodetest.Receipts(t, n.Log(), inv); len(rcs) != 1 {
					t.Fatalf("%d receipts for %s, want 1", len(rcs), inv)
				}
			}
		})
	}
	// c2's call whose event id derives c1's id (no invocation id of its own):
	// its own call too, never answered with c1's receipt.
	id := wire.NewInvocationID(time.Now())
	mine, err := send("call", "c1", id)
	if err != nil || mine.InvocationID != id {
		t.Fatalf("c1's call: %+v, %v", mine.ReceiptSummary, err)
	}
	ev, err := wire.NewEvent(time.Now(), wire.TypeInvocationRequested, wire.ClientActor("c2"),
		wire.InvocationRequest{Key: "IDEM", Body: "from-c2", Token: busToken(t, n, "c2-agent", "IDEM")})
	if err != nil {
		t.Fatal(err)
	}
	ev.ID = strings.ToUpper(strings.TrimPrefix(id, wire.InvocationPrefix))
	data, err := wire.Encode(&ev)
	if err != nil {
		t.Fatal(err)
	}
	reply := rawCall(t, conn["c2"], wire.CallSubject("c2", "IDEM"), data)
	var theirs wire.Receipt
	if reply.Type != wire.TypeReceipt || reply.DataAs(&theirs) != nil || theirs.InvocationID != wire.ScopedInvocationID("c2", id) || !strings.Contains(theirs.Result, `"q":"from-c2"`) {
		t.Fatalf("c2's call deriving c1's id: %s %s; want its own receipt", reply.Type, reply.Data)
	}
	// A client cannot choose an id scoped to another.
	if _, err := send("call", "c1", wire.ScopedInvocationID("c2", wire.NewInvocationID(time.Now()))); err == nil || !strings.Contains(err.Error(), "bad invocation id") {
		t.Fatalf("c1 choosing an id scoped to c2: %v; want a bad invocation id", err)
	}
	if code, body := nodetest.Do(t, n, "GET", "/api/receipts/"+wire.ScopedInvocationID("c2", "inv_none"), ""); code != 404 {
		t.Fatalf("GET a scoped id nobody has: %d %s; want 404", code, body)
	}
}
