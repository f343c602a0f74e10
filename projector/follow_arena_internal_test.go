package projector

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/allocstest"
)

// A projector following the log carves the values of a batch's receipts and
// requests from one arena, used again for the next batch once the batch is
// committed: the receipts a batch stored read back whole after later batches
// were carved from the same chunks, the arena keeps no more than
// liveArenaChunks between batches, and a batch folded through it allocates at
// least one allocation an event less than one folded without.
func TestFollowedBatchesCarveFromOneArena(t *testing.T) {
	p, err := Open(Config{Path: filepath.Join(t.TempDir(), "p.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	seq := uint64(0)
	var made [][]byte // every receipt's data, by invocation
	batch := func(n int) []eventlog.Stored {
		b := make([]eventlog.Stored, 0, 2*n)
		for range n {
			inv := fmt.Sprintf("inv_%026d", len(made))
			at := time.Date(2026, 12, 6, 12, 0, 0, len(made), time.UTC)
			req, err := wire.NewEventWithID(inv, at, wire.TypeInvocationRequested, "owner:terminal-key",
				&wire.InvocationRequest{InvocationID: inv, Key: "WEATHER", Body: "city=" + inv})
			if err != nil {
				t.Fatal(err)
			}
			rc, err := wire.NewEventWithID("rcpt_"+inv[4:], at, wire.TypeReceipt, "engine:capdir", &wire.Receipt{
				ReceiptSummary: wire.ReceiptSummary{InvocationID: inv, Key: "WEATHER", Status: wire.StatusProvenMaterialResult, OK: true, Ran: true, StartedAt: at, FinishedAt: at},
				Body:           "city=" + inv, Result: strings.Repeat("sunny ", 20) + inv,
			})
			if err != nil {
				t.Fatal(err)
			}
			seq++
			b = append(b, eventlog.Stored{Event: req, Stream: wire.DataStream, Subject: wire.RequestSubject("WEATHER"), Seq: seq})
			seq++
			b = append(b, eventlog.Stored{Event: rc, Stream: wire.DataStream, Subject: wire.ReceiptSubject("WEATHER"), Seq: seq})
			made = append(made, bytes.Clone(rc.Data))
		}
		return b
	}
	var values arena
	// Enough batches to go round the arena's chunks several times, some larger
	// than it keeps.
	for _, n := range []int{3, 40, 700, 1, 300, 900, 5} {
		if err := p.applyFollowed(wire.DataStream, batch(n), &values); err != nil {
			t.Fatal(err)
		}
		if len(values.chunks) > liveArenaChunks {
			t.Fatalf("the arena keeps %d chunks after a batch of %d receipts, want at most %d", len(values.chunks), n, liveArenaChunks)
		}
	}
	for i, data := range made {
		inv := fmt.Sprintf("inv_%026d", i)
		var got []byte
		err := p.db.View(func(tx *bolt.Tx) error {
			v, err := getReceipt(tx, []byte(inv))
			got = bytes.Clone(v)
			return err
		})
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("receipt %s read back as %q (%v), want %q", inv, got, err, data)
		}
	}

	const n = 32
	batches := make([][]eventlog.Stored, 0, 64)
	for range cap(batches) {
		batches = append(batches, batch(n))
	}
	next := func() []eventlog.Stored {
		b := batches[0]
		batches = batches[1:]
		return b
	}
	carved := allocstest.PerRun(t, 8, func() {
		if err := p.applyFollowed(wire.DataStream, next(), &values); err != nil {
			t.Fatal(err)
		}
	})
	fresh := allocstest.PerRun(t, 8, func() {
		if err := p.apply(wire.DataStream, next(), nil, nil); err != nil {
			t.Fatal(err)
		}
	})
	if carved > fresh-2*n {
		t.Errorf("a followed batch of %d requests and %d receipts allocates %v times, %v without the arena; want at least %d fewer", n, n, carved, fresh, 2*n)
	}
}
