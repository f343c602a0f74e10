package eventlog_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// A stream's creation time identifies it: it survives a restart and a configuration
// update, and a stream deleted and created again under the same name has a new one.
func TestStateIdentifiesTheStream(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	l := logtest.Open(t, dir)
	appendReceipts(t, l, 3)
	before, err := l.State(ctx, wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	if before.Created.IsZero() || before.LastSeq != 3 || before.FirstSeq != 1 {
		t.Fatalf("state = %+v, want a creation time and sequences 1..3", before)
	}
	l.Close()
	// Reopened with another retention: the same stream, updated.
	l, err = eventlog.Open(ctx, eventlog.Config{DataDir: dir, DataMaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	after, err := l.State(ctx, wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	if !after.Created.Equal(before.Created) || after.LastSeq != 3 {
		t.Fatalf("after a restart and an update: %+v, want %+v", after, before)
	}

	changed := make(chan string, 8)
	stop, err := l.WatchStreams(func(s string) {
		select {
		case changed <- s:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := l.JetStream().DeleteStream(ctx, wire.DataStream); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-changed:
		if s != wire.DataStream {
			t.Fatalf("advisory for %s, want %s", s, wire.DataStream)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no advisory for the deleted stream")
	}
	if _, err := l.State(ctx, wire.DataStream); !errors.Is(err, eventlog.ErrStreamNotFound) {
		t.Fatalf("state of a deleted stream: %v, want ErrStreamNotFound", err)
	}
	if _, err := l.JetStream().CreateStream(ctx, jetstream.StreamConfig{Name: wire.DataStream, Subjects: []string{"capdir.data.>"}}); err != nil {
		t.Fatal(err)
	}
	again, err := l.State(ctx, wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	if again.Created.Equal(before.Created) || again.LastSeq != 0 {
		t.Fatalf("recreated stream: %+v; want a new creation time and an empty stream", again)
	}
}

// Retention removes old messages: FirstSeq rises, LastSeq stays.
func TestStateAfterRetention(t *testing.T) {
	ctx := context.Background()
	l, err := eventlog.Open(ctx, eventlog.Config{DataDir: t.TempDir(), DataMaxAge: 100 * time.Millisecond, DuplicateWindow: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendReceipts(t, l, 3)
	st := logtest.AwaitTrimmed(t, l, wire.DataStream)
	if st.LastSeq != 3 || st.FirstSeq != 4 {
		t.Fatalf("after retention: %+v, want first 4, last 3", st)
	}
}
