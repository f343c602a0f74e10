package dispatcher

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner/fnrunner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// heldMsg is a request message as a worker holds it: its delivery count and the
// time the log stored it are what the test says.
type heldMsg struct {
	subject   string
	data      []byte
	delivered uint64
	stored    time.Time
	acks      atomic.Int32
	progress  atomic.Int32 // InProgress sent for it
}

func (m *heldMsg) Metadata() (*eventlog.MsgMetadata, error) {
	return &eventlog.MsgMetadata{NumDelivered: m.delivered, Timestamp: m.stored}, nil
}
func (m *heldMsg) Data() []byte                     { return m.data }
func (m *heldMsg) ID() string                       { return "" }
func (m *heldMsg) Reply() string                    { return "" }
func (m *heldMsg) Subject() string                  { return m.subject }
func (m *heldMsg) Ack() error                       { m.acks.Add(1); return nil }
func (m *heldMsg) Nak() error                       { return nil }
func (m *heldMsg) NakWithDelay(time.Duration) error { return nil }
func (m *heldMsg) InProgress() error                { m.progress.Add(1); return nil }
func (m *heldMsg) Term() error                      { return nil }

// A first delivery that waited longer than a redelivery takes (in a worker's
// buffer, behind slow calls) may meet an invocation another worker has already
// run from the redelivered copy: it is checked like a redelivery and not run again.
func TestStaleFirstDeliveryIsNotRunAgain(t *testing.T) {
	var runs atomic.Int32
	fns := fnrunner.NewRegistry()
	fns.Register("count", func(context.Context, []any) (string, error) { runs.Add(1); return "ran", nil })
	s := newInternalStack(t, Settings{Workers: 1, AckWait: time.Second}, fns, contract.Row{Key: "COUNT", Type: "fn", Target: "count", Enabled: 1}).s
	ctx := context.Background()

	req := wire.InvocationRequest{Key: "COUNT", Body: "x", Credential: "owner:terminal-key"}
	rev, err := wire.PrepareRequest(time.Now(), &req)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(rev)
	if err != nil {
		t.Fatal(err)
	}
	fresh := &heldMsg{subject: wire.RequestSubject("COUNT"), data: data, delivered: 1, stored: time.Now()}
	s.handle(ctx, fresh) // the copy that ran: one run, one receipt
	stale := &heldMsg{subject: fresh.subject, data: data, delivered: 1, stored: time.Now().Add(-time.Minute)}
	s.handle(ctx, stale)
	if n := runs.Load(); n != 1 {
		t.Fatalf("ran %d times, want once", n)
	}
	if stale.acks.Load() != 1 {
		t.Fatal("the stale copy was not acknowledged")
	}
}
