package eventlog

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

// message is one message's events as the reader puts them: parts events of
// sequence seq.
func message(seq uint64, parts int) []Stored {
	evs := make([]Stored, parts)
	for i := range evs {
		evs[i] = Stored{Seq: seq, Part: i, Parts: parts}
	}
	return evs
}

// A follower's queue hands over every event once, in order, in batches that end
// with a message whole and hold no more than the limit unless a message's
// events take them past it, while the reader puts messages of one to many
// events concurrently and waits whenever the limit is pending.
func TestFollowQueueBatchesWholeMessagesInOrder(t *testing.T) {
	for _, limit := range []int{1, 3, 64} {
		q := newFollowQueue(limit)
		ctx := context.Background()
		quit := make(chan struct{})
		rng := rand.New(rand.NewPCG(1, uint64(limit)))
		sizes := make([]int, 2000)
		total := 0
		for i := range sizes {
			sizes[i] = 1
			if rng.IntN(3) == 0 {
				sizes[i] = 1 + rng.IntN(40)
			}
			total += sizes[i]
		}
		go func() {
			defer q.close()
			for i, n := range sizes {
				if !q.put(ctx, quit, message(uint64(i+1), n)) {
					return
				}
			}
		}()
		var taken followTaken
		var got int
		next := uint64(1) // the sequence expected next
		part := 0
		for {
			batch, ended := taken.more(q, nil, limit)
			if len(batch) == 0 {
				if ended {
					break
				}
				<-q.ready
				continue
			}
			if batch[len(batch)-1].More() {
				t.Fatalf("limit %d: a batch of %d ends inside a message (part %d of %d)", limit, len(batch), batch[len(batch)-1].Part, batch[len(batch)-1].Parts)
			}
			// Past the limit only by the rest of the message the limit fell in.
			if first := len(batch) - batch[len(batch)-1].Parts; len(batch) > limit && first >= limit {
				t.Fatalf("limit %d: a batch of %d whose last message starts at %d", limit, len(batch), first)
			}
			for _, s := range batch {
				if s.Seq != next || s.Part != part {
					t.Fatalf("limit %d: event %d.%d after %d events; want %d.%d", limit, s.Seq, s.Part, got, next, part)
				}
				got++
				if part++; part == s.Parts {
					next, part = next+1, 0
				}
			}
		}
		if got != total {
			t.Fatalf("limit %d: %d events handed over; want %d", limit, got, total)
		}
	}
}

// The reader waits while the limit is pending, and goes on once the follower
// has taken them; it stops waiting, putting nothing, once quit closes.
func TestFollowQueueReaderWaitsForRoom(t *testing.T) {
	ctx := context.Background()
	q := newFollowQueue(2)
	quit := make(chan struct{})
	if !q.put(ctx, quit, message(1, 1)) || !q.put(ctx, quit, message(2, 5)) {
		t.Fatal("put refused below the limit")
	}
	put := make(chan bool, 1)
	go func() { put <- q.put(ctx, quit, message(3, 1)) }()
	select {
	case <-put:
		t.Fatal("put did not wait with 6 events pending and a limit of 2")
	case <-time.After(50 * time.Millisecond):
	}
	var taken followTaken
	// A limit of 6: the batch ends with the 6 pending, before the put they let
	// in could add message 3.
	if batch, _ := taken.more(q, nil, 6); len(batch) != 6 {
		t.Fatalf("took %d events; want the 6 pending", len(batch))
	}
	if ok := <-put; !ok {
		t.Fatal("put refused once there was room")
	}
	if batch, _ := taken.more(q, nil, 100); len(batch) != 1 || batch[0].Seq != 3 {
		t.Fatalf("took %v; want message 3", batch)
	}

	q.put(ctx, quit, message(4, 2))
	go func() { put <- q.put(ctx, quit, message(5, 1)) }()
	close(quit)
	if ok := <-put; ok {
		t.Fatal("put went on after quit closed")
	}
	q.close()
	batch, ended := taken.more(q, nil, 100)
	if len(batch) != 2 || !ended {
		t.Fatalf("after the reader stopped: %d events, ended %v; want message 4's 2 events, and ended", len(batch), ended)
	}
	if batch, ended = taken.more(q, nil, 100); len(batch) != 0 || !ended {
		t.Fatalf("then: %d events, ended %v; want none, and ended", len(batch), ended)
	}
}

// A linger after the reader has stopped ends at once: the reader's close may
// have come with the token that woke the follower, so no token comes to end it.
func TestFollowQueueLingerEndsOnceTheReaderStopped(t *testing.T) {
	q := newFollowQueue(10)
	ctx := context.Background()
	quit := make(chan struct{})
	taken := followTaken{events: make([]Stored, 0, 10)}
	if batch, _ := taken.more(q, nil, 10); len(batch) != 0 {
		t.Fatalf("took %d events from an empty queue", len(batch))
	}
	q.put(ctx, quit, message(1, 1))
	q.close() // the reader stopped (its error, say) after one message
	<-q.ready // the follower wakes once, for both
	batch, ended := taken.more(q, nil, 10)
	if len(batch) != 1 || !ended {
		t.Fatalf("took %d events, ended %v; want 1, and ended", len(batch), ended)
	}
	start := time.Now()
	batch = taken.linger(ctx, q, batch, 10, FollowOptions{Max: 10, Linger: 5 * time.Second})
	if d := time.Since(start); d > 2*time.Second || len(batch) != 1 {
		t.Fatalf("linger after the reader stopped: %d events after %v; want 1 at once", len(batch), d)
	}
}

// What the follower has taken keeps no copy of an event once it is in a
// batch: neither its data nor a pack's buffer stays reachable from the queue
// while the follower waits.
func TestFollowQueueKeepsNoEventHandedOver(t *testing.T) {
	q := newFollowQueue(10)
	ctx := context.Background()
	evs := message(1, 3)
	for i := range evs {
		evs[i].Data = []byte("data")
		evs[i].buf = new([]byte)
	}
	q.put(ctx, nil, evs)
	taken := followTaken{events: make([]Stored, 0, 10)}
	if batch, _ := taken.more(q, nil, 10); len(batch) != 3 {
		t.Fatalf("took %d events; want 3", len(batch))
	}
	// The buffer the events came in has gone back to the queue by now, and
	// the follower holds the other: neither may hold them.
	for name, buf := range map[string][]Stored{"the queue's": q.pending, "the follower's": taken.events} {
		for i, s := range buf[:cap(buf)] {
			if s.Data != nil || s.buf != nil {
				t.Fatalf("%s buffer still holds the data or buffer of an event handed over (at %d)", name, i)
			}
		}
	}
}
