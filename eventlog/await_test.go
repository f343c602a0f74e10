package eventlog_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// silentFuture is an append whose acknowledgement never comes.
type silentFuture struct{}

func (silentFuture) Ok() <-chan *jetstream.PubAck { return nil }
func (silentFuture) Err() <-chan error            { return nil }
func (silentFuture) Msg() *nats.Msg               { return nil }

func TestAwaitAckWithinGivesUp(t *testing.T) {
	start := time.Now()
	_, err := eventlog.AwaitAckWithin(context.Background(), silentFuture{}, 50*time.Millisecond)
	if !errors.Is(err, eventlog.ErrAckTimeout) {
		t.Fatalf("err = %v, want ErrAckTimeout", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("waited far past the bound")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := eventlog.AwaitAckWithin(ctx, silentFuture{}, time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
