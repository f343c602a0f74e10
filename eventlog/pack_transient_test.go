package eventlog_test

import (
	"bytes"
	"context"
	"fmt"
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
	err = l.FollowBatches(ctx, wire.DataStream, 1, opts, func(b []eventlog.Stored) error {
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
