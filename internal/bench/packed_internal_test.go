package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestUnpackRefusesMalformedPacks: a pack is read back as the events put in it,
// and anything else (empty, a zero or overlong length, a length past the end,
// more than MaxPack events) is refused with errMalformedPack.
func TestUnpackRefusesMalformedPacks(t *testing.T) {
	var pack []byte
	for i := range 3 {
		pack = appendPacked(pack, []byte(`{"id":"`+strconv.Itoa(i)+`"}`))
	}
	evs, err := unpack(nil, pack)
	if err != nil || len(evs) != 3 || string(evs[2]) != `{"id":"2"}` {
		t.Fatalf("unpack of 3 events: %q, %v", evs, err)
	}
	full := bytes.Repeat(appendPacked(nil, []byte("x")), MaxPack)
	if evs, err := unpack(nil, full); err != nil || len(evs) != MaxPack {
		t.Fatalf("unpack of %d events: %d, %v", MaxPack, len(evs), err)
	}
	for name, b := range map[string][]byte{
		"empty":                   nil,
		"zero length":             {0},
		"length past the end":     append(binary.AppendUvarint(nil, 10), "short"...),
		"truncated length":        {0x80},
		"overlong event":          append(binary.AppendUvarint(nil, maxPackEvent+1), make([]byte, maxPackEvent+1)...),
		"trailing byte":           append(appendPacked(nil, []byte("x")), 5),
		"more than MaxPack event": appendPacked(full, []byte("x")),
	} {
		if _, err := unpack(nil, b); !errors.Is(err, errMalformedPack) {
			t.Errorf("%s: %v, want errMalformedPack", name, err)
		}
	}
}

// startPackedEnv starts the packed reference on a fresh node's server with 4
// workers, on a connection of its own.
func startPackedEnv(t *testing.T) *Packed {
	t.Helper()
	e, err := StartEnv(context.Background(), EnvConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	nc, err := e.Node.Log().NewConn()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	p, err := StartPacked(context.Background(), nc, t.TempDir(), 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// publishPack appends data to the request subject with message id id and
// returns its sequence.
func publishPack(t *testing.T, p *Packed, id string, data []byte) uint64 {
	t.Helper()
	ack, err := p.js.PublishMsg(context.Background(), &nats.Msg{Subject: packReqSubj, Data: data, Header: nats.Header{jetstream.MsgIDHeader: []string{id}}})
	if err != nil {
		t.Fatal(err)
	}
	return ack.Sequence
}

// awaitWorked waits until the workers have acked or terminated every request
// message up to seq.
func awaitWorked(t *testing.T, p *Packed, seq uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := p.js.Consumer(ctx, packStream, packWorkers)
	if err != nil {
		t.Fatal(err)
	}
	for {
		info, err := c.Info(ctx)
		if err != nil {
			t.Fatalf("request message %d not worked: %v", seq, err)
		}
		if info.AckFloor.Stream >= seq && info.NumAckPending == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPackedRequestMessageRunTwiceStoresOneReceiptMessage: a request message
// holding 50 requests, stored twice (as when a worker ran it, stored its receipts
// and was killed before acking it, and the message came again), gets one receipt
// message of 50 receipts, folded once.
func TestPackedRequestMessageRunTwiceStoresOneReceiptMessage(t *testing.T) {
	p := startPackedEnv(t)
	var pack []byte
	for i := range 50 {
		b, _ := json.Marshal(refRequest{ID: "twice-" + strconv.Itoa(i), Key: EchoKey, Body: "b" + strconv.Itoa(i)})
		pack = appendPacked(pack, b)
	}
	publishPack(t, p, "q-twice-0", pack)
	awaitWorked(t, p, publishPack(t, p, "q-twice-0-again", pack))
	tl, err := p.Tally(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tl.RequestMsgs != 2 || tl.Requests != 100 || tl.ReceiptMsgs != 1 || tl.Receipts != 50 || len(tl.Twice) > 0 || len(tl.Unanswered) > 0 {
		t.Fatalf("the stream: %+v; want 2 request messages of 50, one receipt message of 50, none twice or unanswered", tl)
	}
	// The follower folds the one receipt message it is given.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for p.Folded() < 50 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	if n, err := p.Stored(); err != nil || n != 50 || p.Folded() != 50 {
		t.Fatalf("%d receipts in bbolt (%v), %d folded; want 50 and 50", n, err, p.Folded())
	}
}

// TestPackedTerminatesAMalformedMessage: a request message that is not a pack,
// or holds an event that is not a request, is terminated: no receipt appended,
// nothing folded.
func TestPackedTerminatesAMalformedMessage(t *testing.T) {
	p := startPackedEnv(t)
	good, _ := json.Marshal(refRequest{ID: "good", Key: EchoKey, Body: "b"})
	publishPack(t, p, "q-bad-1", []byte("not a pack"))
	awaitWorked(t, p, publishPack(t, p, "q-bad-2", appendPacked(appendPacked(nil, good), []byte("{not json"))))
	msgs, err := p.StreamMsgs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if msgs != 2 || p.Folded() != 0 {
		t.Fatalf("%d messages in the stream, %d receipts folded; want 2 (the requests) and 0", msgs, p.Folded())
	}
}
