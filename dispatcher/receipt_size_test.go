package dispatcher_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

// A receipt the log refuses for good (here the stream's own message size limit,
// as an operator may set on a cluster) does not send the call round again: the
// engine stores a small failure receipt in its place. One call, one receipt.
func TestUnstorableReceiptGetsAFailureReceiptNotARerun(t *testing.T) {
	st := newStack(t)
	var runs atomic.Int32
	big := strings.Repeat("r", 100<<10)
	st.fns.Register("big", func(ctx context.Context, args []any) (string, error) {
		runs.Add(1)
		return big, nil
	})
	s := st.newService(t, func(c *dispatcher.ServiceConfig) { c.AckWait = time.Second })
	st.run(t)
	st.putRow(t, fnRow("BIG", "big", "# WHAT: a large answer"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := st.log.JetStream().Stream(ctx, wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	sc := stream.CachedInfo().Config
	sc.MaxMsgSize = 64 << 10
	if _, err := st.log.JetStream().UpdateStream(ctx, sc); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })

	rc := invoke(t, s, "BIG", "x")
	if rc.Status != wire.StatusRanWithError || !rc.Ran || rc.OK || !strings.HasPrefix(rc.Result, "ERR:receipt:too_large:") ||
		rc.Extra["truncated"] != true || rc.Fingerprints.Output != dispatcher.Fingerprint(big) {
		t.Fatalf("receipt = %s %s ran=%v extra=%v", rc.Status, rc.Result, rc.Ran, rc.Extra)
	}
	nodetest.WaitDispatchIdle(t, st.log)
	if n := runs.Load(); n != 1 {
		t.Fatalf("the call ran %d times, want once", n)
	}
	if n := receiptsFor(t, st.log, rc.InvocationID); n != 1 {
		t.Fatalf("%d receipts, want 1", n)
	}
}

// The request event carries the body JSON-encoded: a body under the payload
// ceiling whose encoding does not fit in one event (2 MiB of '<' is 12 MiB) is
// refused with ErrPayloadTooLarge before anything is appended.
func TestInvokeRefusesABodyWhoseEncodingDoesNotFit(t *testing.T) {
	st := newStack(t)
	s := st.newService(t, func(c *dispatcher.ServiceConfig) { c.MaxPayload = 2 << 20 })
	st.run(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stream, err := st.log.JetStream().Stream(ctx, wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Invoke(ctx, wire.InvocationRequest{Key: "ANY", Body: strings.Repeat("<", 2<<20), Credential: "owner:terminal-key"})
	if !errors.Is(err, dispatcher.ErrPayloadTooLarge) || !strings.Contains(err.Error(), "once JSON-encoded") {
		t.Fatalf("invoke: %v", err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 0 {
		t.Fatalf("%d events appended", info.State.Msgs)
	}
}
