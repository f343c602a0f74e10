package dispatcher_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
)

// An event published first under the id a receipt would have had, were receipt ids
// derived from the invocation id alone, does not make the log drop the real receipt
// as a duplicate: receipt event ids are keyed with the deployment's secret.
func TestAForgedReceiptIDDoesNotSuppressTheReceipt(t *testing.T) {
	st := newStack(t)
	s := st.newService(t, nil)
	st.run(t)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st.putRow(t, fnRow("ECHO", "echo", ""))

	inv := wire.NewInvocationID(time.Now())
	decoy, err := wire.NewEvent(time.Now(), wire.TypeInvocationRequested, "nats:mallory", wire.InvocationRequest{Key: "ECHO", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	decoy.ID = "rcpt_" + strings.TrimPrefix(inv, wire.InvocationPrefix) // the unkeyed derivation
	if _, err := st.log.Append(context.Background(), wire.RequestSubject("ECHO"), decoy); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc, err := s.Invoke(ctx, wire.InvocationRequest{InvocationID: inv, Key: "ECHO", Body: "hello", Credential: "owner:terminal-key"})
	if err != nil || rc.Result != "hello" {
		t.Fatalf("invoke: %v %+v", err, rc)
	}
	if n := receiptsFor(t, st.log, inv); n != 1 {
		t.Fatalf("%d receipts of %s in the log, want 1", n, inv)
	}
}
