package eventlog_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
)

func TestAwaitAckWithinGivesUp(t *testing.T) {
	start := time.Now()
	_, err := eventlog.AwaitAckWithin(context.Background(), eventlog.Unanswered(), 50*time.Millisecond)
	if !errors.Is(err, eventlog.ErrAckTimeout) {
		t.Fatalf("err = %v, want ErrAckTimeout", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("waited far past the bound")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := eventlog.AwaitAckWithin(ctx, eventlog.Unanswered(), time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// An async append whose acknowledgement never comes (the stream is gone and a
// plain subscriber takes the message without answering, as a leader that went
// away would) fails with ErrAckTimeout after Config.AckTimeout, and leaves nothing
// pending: Close does not wait for it.
func TestAppendAsyncAcknowledgementLost(t *testing.T) {
	l, err := eventlog.Open(context.Background(), eventlog.Config{DataDir: t.TempDir(), AckTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.JetStream().DeleteStream(context.Background(), wire.DataStream); err != nil {
		t.Fatal(err)
	}
	swallow, err := l.Conn().Subscribe(wire.ReceiptSubject(">"), func(*nats.Msg) {})
	if err != nil {
		t.Fatal(err)
	}
	defer swallow.Unsubscribe()
	ev, err := l.NewEvent(wire.TypeReceipt, "test", map[string]string{"invocation_id": "inv_lost"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := l.AppendAsync(wire.ReceiptSubject("LOST"), ev)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.Failed():
		if err := f.Err(); !errors.Is(eventlog.AppendError(err), eventlog.ErrAckTimeout) {
			t.Fatalf("future's error %v does not match ErrAckTimeout", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the future never failed: the append stays pending")
	}
	if n := l.PendingAppends(); n != 0 {
		t.Fatalf("%d appends still pending", n)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}
