package eventlog_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// A transient follower (FollowOptions.Transient) reads compressed packs into
// buffers it uses again: every event it hands over holds its own bytes for as
// long as the handler runs, though the reader goes on decompressing the next
// packs meanwhile, and Seen sees the same bytes; what a handler keeps past its
// return is what it copied.
func TestTransientFollowerHandsEveryPackWhole(t *testing.T) {
	l, want, _ := appendPackedRequests(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	seen := map[string][]byte{}
	var got int
	opts := eventlog.FollowOptions{Max: 16, Transient: true, Seen: func(s *eventlog.Stored) {
		mu.Lock()
		seen[s.ID] = s.Data // kept until the batch's handler has looked at it
		mu.Unlock()
	}}
	err := l.FollowBatches(ctx, wire.DataStream, 1, opts, func(b []eventlog.Stored) error {
		check := func(when string) {
			for _, s := range b {
				if !bytes.Equal(s.Data, want[s.ID]) {
					t.Fatalf("%s: event %s (part %d of %d at %d) holds %q, want %q", when, s.ID, s.Part, s.Parts, s.Seq, s.Data, want[s.ID])
				}
				mu.Lock()
				if !bytes.Equal(seen[s.ID], want[s.ID]) {
					t.Fatalf("%s: Seen was handed %q for %s", when, seen[s.ID], s.ID)
				}
				mu.Unlock()
			}
		}
		check("handed over")
		time.Sleep(2 * time.Millisecond) // the reader decompresses the next packs meanwhile
		check("once the reader read on")
		mu.Lock()
		for _, s := range b {
			delete(seen, s.ID)
		}
		mu.Unlock()
		if got += len(b); got == len(want) {
			cancel()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != len(want) {
		t.Fatalf("handed %d events, want %d", got, len(want))
	}
}

// A follower with FollowOptions.HandsBack leaves the buffers its packs were
// decompressed into with the handler: batches kept past the handler's return
// hold their bytes until the handler hands them back with Release, in order,
// and the reader goes on with other buffers meanwhile.
func TestHandsBackFollowerKeepsBuffersUntilReleased(t *testing.T) {
	l, want, last := appendPackedRequests(t)
	// Every batch is kept, none handed back, until the whole log is read; then
	// the first half is handed back and read on: the rest still holds its bytes.
	var kept [][]eventlog.Stored
	got := 0
	opts := eventlog.FollowOptions{Max: 4, Transient: true, HandsBack: true}
	err := l.ReadRangeWith(context.Background(), wire.DataStream, 1, last, opts, func(b []eventlog.Stored) error {
		kept = append(kept, slices.Clone(b)) // the follower reuses b
		got += len(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != len(want) {
		t.Fatalf("handed %d events, want %d", got, len(want))
	}
	check := func(when string, batches [][]eventlog.Stored) {
		t.Helper()
		for _, b := range batches {
			for _, s := range b {
				if !bytes.Equal(s.Data, want[s.ID]) {
					t.Fatalf("%s: event %s (part %d of %d at %d) holds %q, want %q", when, s.ID, s.Part, s.Parts, s.Seq, s.Data, want[s.ID])
				}
			}
		}
	}
	check("the whole log read, nothing handed back", kept)
	half := len(kept) / 2
	for _, b := range kept[:half] {
		eventlog.Release(b)
	}
	// Reading again takes the buffers handed back: the batches not handed back
	// keep theirs.
	err = l.ReadRangeWith(context.Background(), wire.DataStream, 1, last, opts, func(b []eventlog.Stored) error {
		check("read again", [][]eventlog.Stored{b})
		eventlog.Release(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	check("after a second read", kept[half:])
}

// appendPackedRequests appends 360 requests to a packing log, in packs of 9,
// and returns the log, each event's data by id and the stream's last sequence,
// fewer than the events.
func appendPackedRequests(t *testing.T) (*eventlog.Log, map[string][]byte, uint64) {
	t.Helper()
	l := openPacking(t, eventlog.Config{})
	want := map[string][]byte{}
	for round := range 40 {
		evs := make([]wire.Event, 9)
		for i := range evs {
			// Alike enough to compress, and each its own.
			evs[i] = mustEvent(t, l, wire.TypeInvocationRequested, map[string]string{
				"key": fmt.Sprintf("K%d", i%3), "body": strings.Repeat("city=Lisbon&units=metric&", 8), "n": fmt.Sprint(round*9 + i)})
			want[evs[i].ID] = bytes.Clone(evs[i].Data)
		}
		for _, p := range packAppendEvents(t, l, evs, requestOn) {
			if _, err := eventlog.AwaitAck(context.Background(), p); err != nil {
				t.Fatal(err)
			}
		}
	}
	last, err := l.LastSeq(context.Background(), wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	if last >= uint64(len(want)) {
		t.Fatalf("%d events stored in %d messages: not packed", len(want), last)
	}
	return l, want, last
}
