package e2e_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

// busSend is how a bus client sends a request: published and waited for on
// its notice subject (wire.Invoke), or as one call (wire.Call).
type busSend struct {
	name string
	send func(ctx context.Context, bc *busClient, client, key, body string, opts ...wire.InvokeOption) (wire.Receipt, error)
}

var busSends = []busSend{
	{"published", func(ctx context.Context, bc *busClient, client, key, body string, opts ...wire.InvokeOption) (wire.Receipt, error) {
		return wire.Invoke(ctx, bc.nc, client, key, body, opts...)
	}},
	{"called", func(ctx context.Context, bc *busClient, client, key, body string, opts ...wire.InvokeOption) (wire.Receipt, error) {
		return wire.Call(ctx, bc.nc, client, key, body, opts...)
	}},
}

// A token of the bus client that could not make the client's call under a
// chosen invocation id learns nothing of its key or arguments by sending
// guesses under that id: the right guess and a wrong one (another body,
// another key it may not call either) get the same refusal of the gate, as
// for any request the token may not make; before, a wrong guess was told the
// id was used for another request (wire.ErrInvocationIDReused) and the right
// one scope:<KEY> (wire.ErrRepeatRefused), so the guesses confirmed the first
// call's key and body one by one. Both for a token of the same subject and
// one of another, published and called. A request the token may make that is
// not the first one is still told the id was used for another request. No
// guess runs anything.
func TestBusRepeatGuessesLearnNothingOfACallOutOfScope(t *testing.T) {
	w := newIdemWorld(t, 0, false)
	n := w.g.n
	tokRow(t, n, map[string]any{"key": "ECHO", "type": "fn", "target": "echo", "content": "# WHAT: Say it back.\n# ARGS: $1=text\n[\"$1\"]"})
	tokRow(t, n, map[string]any{"key": "OTHER", "type": "fn", "target": "echo", "content": "# WHAT: Say it back.\n# ARGS: $1=text\n[\"$1\"]"})
	c1 := w.g.connect(t, "c1")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, via := range busSends {
		id := wire.NewInvocationID(time.Now())
		hits := w.up.Hits()
		first, err := via.send(ctx, c1, "c1", "IDEM", "acct-1234", wire.WithToken(busToken(t, n, "agent-7", "IDEM")), wire.WithInvocationID(id))
		if err != nil || !first.OK || w.up.Hits() != hits+1 {
			t.Fatalf("%s: first call: %+v, %v", via.name, first, err)
		}
		_, rcs := logCounts(t, n)
		for _, sub := range []string{"agent-7", "agent-9"} {
			narrow := wire.WithToken(busToken(t, n, sub, "ECHO"))
			for _, guess := range []struct{ key, body, literal string }{
				{"IDEM", "acct-1234", "scope:IDEM"},   // the call itself
				{"IDEM", "acct-0000", "scope:IDEM"},   // another body
				{"OTHER", "acct-1234", "scope:OTHER"}, // another key out of scope
			} {
				rc, err := via.send(ctx, c1, "c1", guess.key, guess.body, narrow, wire.WithInvocationID(id))
				if !errors.Is(err, wire.ErrRepeatRefused) || rc.Status != wire.StatusRefusedScope || rc.Result != guess.literal {
					t.Errorf("%s: a token of %s without IDEM guesses %s %q: %+v, %v; want ErrRepeatRefused %s, as for any request it may not make",
						via.name, sub, guess.key, guess.body, rc.ReceiptSummary, err, guess.literal)
				}
				if strings.Contains(rc.Result, "hit") || rc.Trace == first.Trace {
					t.Errorf("%s: the answer to a guess holds the first call's: %+v %s", via.name, rc.ReceiptSummary, rc.Result)
				}
			}
			if rc, err := via.send(ctx, c1, "c1", "ECHO", "x", narrow, wire.WithInvocationID(id)); !errors.Is(err, wire.ErrInvocationIDReused) {
				t.Errorf("%s: a request the token of %s may make under the client's used id: %+v, %v; want ErrInvocationIDReused", via.name, sub, rc.ReceiptSummary, err)
			}
		}
		if _, c := logCounts(t, n); c != rcs || w.up.Hits() != hits+1 {
			t.Fatalf("%s: the log went from %d receipts to %d, %d hits; want no guess run", via.name, rcs, c, w.up.Hits()-hits)
		}
	}
}

// A bus client's call under a chosen invocation id is its token's subject's:
// the same request sent again under the id with a token of another subject,
// one that may make the call, is told the id was used for another request, as
// a wrong guess is, and is given nothing of the call (its receipt names the
// first token's subject, token:agent-7, which a token of agent-9 cannot read
// at GET /api/dispatch?receipt= either). Before, the right guess got the first
// call's receipt, its result included, and a wrong one was told the id was
// reused: the guesses confirmed the call's key and body, then read its result.
// A token of the first call's subject still gets the first receipt. Published
// and called, and called while the first call still runs.
func TestBusRepeatWithAnotherSubjectsTokenGetsNothingOfTheCall(t *testing.T) {
	w := newIdemWorld(t, 0, false)
	n := w.g.n
	c1 := w.g.connect(t, "c1")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, via := range busSends {
		id := wire.NewInvocationID(time.Now())
		hits := w.up.Hits()
		first, err := via.send(ctx, c1, "c1", "IDEM", "acct-1234", wire.WithToken(busToken(t, n, "agent-7", "IDEM")), wire.WithInvocationID(id))
		if err != nil || !first.OK || first.Actor != wire.TokenActor("agent-7") || w.up.Hits() != hits+1 {
			t.Fatalf("%s: first call: %+v, %v", via.name, first, err)
		}
		_, rcs := logCounts(t, n)
		other := busToken(t, n, "agent-9", "IDEM")
		for _, body := range []string{"acct-1234", "acct-0000"} { // the call itself, another body
			rc, err := via.send(ctx, c1, "c1", "IDEM", body, wire.WithToken(other), wire.WithInvocationID(id))
			if !errors.Is(err, wire.ErrInvocationIDReused) || rc.Trace != "" || rc.Result != "" || rc.Actor != "" {
				t.Errorf("%s: a token of agent-9 sends IDEM %q under agent-7's call's id: %+v %s, %v; want ErrInvocationIDReused and nothing of the call",
					via.name, body, rc.ReceiptSummary, rc.Result, err)
			}
		}
		if code, resp := nodetest.DoToken(t, n, "GET", "/api/dispatch?receipt="+id, "", other); code != 404 {
			t.Errorf("%s: the token of agent-9 reads the call at ?receipt=: %d %s; want 404", via.name, code, resp)
		}
		rc, err := via.send(ctx, c1, "c1", "IDEM", "acct-1234", wire.WithToken(busToken(t, n, "agent-7", "IDEM")), wire.WithInvocationID(id))
		if err != nil || rc.Trace != first.Trace || rc.Result != first.Result {
			t.Errorf("%s: a refreshed token of agent-7 sends the call again: %+v, %v; want the first receipt", via.name, rc.ReceiptSummary, err)
		}
		if _, c := logCounts(t, n); c != rcs || w.up.Hits() != hits+1 {
			t.Fatalf("%s: the log went from %d receipts to %d, %d hits; want nothing run", via.name, rcs, c, w.up.Hits()-hits)
		}
	}
}

// The same while the first call still runs: a call of another subject's token
// under its id waits for its receipt, and is then told the id was used for
// another request, not given the receipt.
func TestBusCallWithAnotherSubjectsTokenWaitingForTheFirstGetsNothingOfIt(t *testing.T) {
	w := newIdemWorld(t, 0, true)
	n := w.g.n
	c1 := w.g.connect(t, "c1")
	id := wire.NewInvocationID(time.Now())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	type answer struct {
		rc  wire.Receipt
		err error
	}
	first, again := make(chan answer, 1), make(chan answer, 1)
	go func() {
		rc, err := wire.Call(ctx, c1.nc, "c1", "IDEM", "acct-1234", wire.WithToken(busToken(t, n, "agent-7", "IDEM")), wire.WithInvocationID(id))
		first <- answer{rc, err}
	}()
	<-w.up.Arrived() // the first call is in the upstream
	go func() {
		rc, err := wire.Call(ctx, c1.nc, "c1", "IDEM", "acct-1234", wire.WithToken(busToken(t, n, "agent-9", "IDEM")), wire.WithInvocationID(id))
		again <- answer{rc, err}
	}()
	time.Sleep(200 * time.Millisecond) // the second call waits for the first one's receipt
	w.up.Release()
	if got := <-first; got.err != nil || !got.rc.OK {
		t.Fatalf("the first call: %+v, %v", got.rc, got.err)
	}
	if got := <-again; !errors.Is(got.err, wire.ErrInvocationIDReused) || got.rc.Trace != "" || got.rc.Result != "" {
		t.Fatalf("agent-9's call under agent-7's running call's id: %+v %s, %v; want ErrInvocationIDReused and nothing of the call", got.rc.ReceiptSummary, got.rc.Result, got.err)
	}
	if _, rcs := logCounts(t, n); rcs != 1 || w.up.Hits() != 1 {
		t.Fatalf("%d receipts, %d hits; want the one call", rcs, w.up.Hits())
	}
}

// Another bus client guessing the client's call under its chosen id learns
// nothing of the call: whatever it sends under the id is its own call, under
// the id scoped to it, the right guess of the key and body and a wrong one
// alike (run and receipted as its own with a token that may make it, refused as
// a fresh call with one that may not), never the first call's status, trace or
// result. Its receipt's id, scoped, tells it the id was taken, nothing more.
// Sending c1's request's event id as its own (read from JetStream's refusal of
// an expected last message id, see the security model) gets it none of c1's
// call either, and runs nothing.
func TestBusGuessesUnderAnotherClientsIDLearnNothingOfItsCall(t *testing.T) {
	w := newIdemWorld(t, 0, false)
	n := w.g.n
	c1, c2 := w.g.connect(t, "c1"), w.g.connect(t, "c2")
	tokRow(t, n, map[string]any{"key": "ECHO", "type": "fn", "target": "echo", "content": "# WHAT: Say it back.\n# ARGS: $1=text\n[\"$1\"]"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	own := wire.WithToken(busToken(t, n, "agent-7", "IDEM"))
	for _, via := range busSends {
		for _, c2tok := range []struct {
			name   string
			tok    wire.InvokeOption
			status string
		}{
			{"in scope", wire.WithToken(busToken(t, n, "agent-9", "IDEM")), wire.StatusProvenMaterialResult},
			{"out of scope", wire.WithToken(busToken(t, n, "agent-9", "ECHO")), wire.StatusRefusedScope},
		} {
			for _, body := range []string{"acct-1234", "acct-0000"} { // the right guess, a wrong one
				id := wire.NewInvocationID(time.Now())
				first, err := via.send(ctx, c1, "c1", "IDEM", "acct-1234", own, wire.WithInvocationID(id))
				if err != nil || !first.OK {
					t.Fatalf("%s: c1's call: %+v, %v", via.name, first, err)
				}
				rc, err := via.send(ctx, c2, "c2", "IDEM", body, c2tok.tok, wire.WithInvocationID(id))
				if err != nil || rc.InvocationID != wire.ScopedInvocationID("c2", id) || rc.Status != c2tok.status || rc.Actor != wire.TokenActor("agent-9") ||
					rc.Trace == first.Trace || rc.Result == first.Result {
					t.Errorf("%s: c2 with a token %s sends IDEM %q under c1's id: %+v %s, %v; want its own call under %s, %s",
						via.name, c2tok.name, body, rc.ReceiptSummary, rc.Result, err, wire.ScopedInvocationID("c2", id), c2tok.status)
				}
				if c2tok.status == wire.StatusProvenMaterialResult && !strings.Contains(rc.Result, `"q":"`+body+`"`) {
					t.Errorf("%s: c2's call ran with another body than its own: %s", via.name, rc.Result)
				}
			}
		}
	}

	// c1's request's event id as c2's own, inside the duplicate window: the
	// log holds it already, c2's request is not stored, nothing runs, and c2
	// is given nothing of c1's call.
	first, err := wire.Call(ctx, c1.nc, "c1", "IDEM", "acct-1234", own)
	if err != nil || !first.OK {
		t.Fatalf("c1's call: %+v, %v", first, err)
	}
	var evID string
	if err := n.Log().Read(ctx, wire.DataStream, 1, func(s eventlog.Stored) error {
		if s.Type == wire.TypeInvocationRequested && wire.RequestInvocationID(s.ID) == first.InvocationID {
			evID = s.ID
		}
		return nil
	}); err != nil || evID == "" {
		t.Fatalf("c1's request in the log: %q, %v", evID, err)
	}
	reqs, rcs := logCounts(t, n)
	hits := w.up.Hits()
	_, envelope, _ := callEnvelope(t, "c2", "acct-1234", busToken(t, n, "agent-9", "IDEM"), evID, "")
	rc, err := sendCall(c2, "c2", envelope, 3*time.Second)
	if rc.Trace == first.Trace || rc.Result == first.Result || err != nil && strings.Contains(err.Error(), first.Trace) {
		t.Errorf("c2 sent c1's event id: %+v %s, %v; given c1's call", rc.ReceiptSummary, rc.Result, err)
	}
	if r, c := logCounts(t, n); r != reqs || c != rcs || w.up.Hits() != hits {
		t.Errorf("c2 sent c1's event id: the log went from %d requests and %d receipts to %d and %d, %d hits", reqs, rcs, r, c, w.up.Hits()-hits)
	}
}
