package eventlog_test

import (
	"context"
	"errors"
	"testing"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
)

// ReadSeq reads one event by its sequence, with its subject; a sequence the
// stream does not hold is ErrNoMessage; a message that is not an envelope comes
// back Invalid.
func TestReadSeq(t *testing.T) {
	l := logtest.Open(t, "")
	ctx := context.Background()
	ev := mustEvent(t, l, wire.TypeInvocationRequested, wire.InvocationRequest{InvocationID: "inv_1", Key: "K", Body: "b"})
	seq, err := l.Append(ctx, wire.RequestSubject("K"), ev)
	if err != nil {
		t.Fatal(err)
	}
	st, err := l.ReadSeq(ctx, wire.DataStream, seq)
	var req wire.InvocationRequest
	if err != nil || st.Seq != seq || st.Subject != wire.RequestSubject("K") || st.ID != ev.ID || st.DataAs(&req) != nil || req.Body != "b" {
		t.Fatalf("ReadSeq(%d) = %+v, %v", seq, st, err)
	}
	if _, err := l.ReadSeq(ctx, wire.DataStream, seq+1); !errors.Is(err, eventlog.ErrNoMessage) {
		t.Fatalf("ReadSeq past the end: %v", err)
	}
	if _, err := l.ReadSeq(ctx, "NOPE", 1); err == nil {
		t.Fatal("ReadSeq of an unknown stream")
	}
	if _, err := l.JetStream().PublishMsg(ctx, &nats.Msg{Subject: wire.RequestSubject("K"), Data: []byte("not json")}); err != nil {
		t.Fatal(err)
	}
	st, err = l.ReadSeq(ctx, wire.DataStream, seq+1)
	if err != nil || st.Invalid == "" {
		t.Fatalf("ReadSeq of a message that is no envelope = %+v, %v", st, err)
	}
}
