package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// floorStream is a scratch stream on the node's own store: same server, same
// directory, same fsync policy as the log, and no consumer reading it.
const (
	floorStream  = "BENCH_FLOOR"
	floorSubject = "bench.floor.req"
)

// RequestPayload is a real INVOCATION_REQUESTED envelope for the echo row, as a bus
// client publishes it: the payload size every floor figure uses.
func RequestPayload() []byte {
	_, ev, _, err := wire.NewBusRequest(BusClient, EchoKey, "hello, capdir benchmark", time.Now())
	if err != nil {
		panic(err) // EchoKey is a valid key
	}
	b, _ := json.Marshal(ev)
	return b
}

// Floor is the raw publish rate of the log's store.
type Floor struct {
	Async, Sync Result
}

// The floor's rows. Their names do not carry the event's size (its time's
// digits vary from run to run), so that runs line up (Compare); the size is in
// their note.
const (
	FloorAsyncName = "JetStream async publish of a request event"
	FloorSyncName  = "JetStream sync publish of a request event"
)

// MeasureFloor publishes payload-sized messages, with a message id as every append
// carries, to a scratch stream on js: n asynchronously (up to the connection's
// pending limit in flight), then up to nSync one at a time, each waiting for its ack.
func MeasureFloor(ctx context.Context, js jetstream.JetStream, n, nSync int, budget time.Duration) (Floor, error) {
	var f Floor
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: floorStream, Subjects: []string{floorSubject}, Storage: jetstream.FileStorage,
		Duplicates: 2 * time.Minute,
	})
	if err != nil {
		return f, fmt.Errorf("bench: floor stream: %w", err)
	}
	defer js.DeleteStream(context.Background(), floorStream)
	_ = s
	payload := RequestPayload()
	msgs := func(prefix string, n int) []*nats.Msg {
		out := make([]*nats.Msg, n)
		for i := range out {
			out[i] = &nats.Msg{Subject: floorSubject, Data: payload, Header: nats.Header{jetstream.MsgIDHeader: []string{prefix + strconv.Itoa(i)}}}
		}
		return out
	}
	if _, err := publishAsync(ctx, js, msgs("w", min(n/10, 5000))); err != nil {
		return f, err
	}
	el, err := publishAsync(ctx, js, msgs("a", n))
	if err != nil {
		return f, err
	}
	f.Async = rateResult(ScenarioFloor, FloorAsyncName, "publishes", n, el, nil)
	f.Async.Note = fmt.Sprintf("%d B", len(payload))
	sync := msgs("s", nSync)
	lat, el, err := Drive(ctx, nSync, 1, budget, func(ctx context.Context, i int) error {
		_, err := js.PublishMsg(ctx, sync[i])
		return err
	})
	if err != nil {
		return f, fmt.Errorf("bench: sync publish: %w", err)
	}
	f.Sync = rateResult(ScenarioFloor, FloorSyncName, "publishes", len(lat), el, lat)
	f.Sync.Note = f.Async.Note
	if f.Async.Rate > 0 {
		f.Sync.Floor = f.Sync.Rate / f.Async.Rate
	}
	return f, nil
}

// publishAsync publishes msgs without waiting, retrying while the connection's
// pending window is full, and returns once every one is acknowledged.
func publishAsync(ctx context.Context, js jetstream.JetStream, msgs []*nats.Msg) (time.Duration, error) {
	start := time.Now()
	for _, m := range msgs {
		for {
			_, err := js.PublishMsgAsync(m)
			if err == nil {
				break
			}
			if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
				return 0, fmt.Errorf("bench: async publish: %w", err)
			}
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(2 * time.Minute):
		return 0, errors.New("bench: async publishes not acknowledged within 2m")
	}
	return time.Since(start), nil
}
