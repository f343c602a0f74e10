package projector

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	bolt "go.etcd.io/bbolt"
)

// A projection written before streams were recorded has only its checkpoints: it
// takes the stream it finds when that stream reaches its checkpoint, and refuses one
// that ends before it.
func TestProjectionWithoutARecordedStream(t *testing.T) {
	ctx := context.Background()
	l := logtest.Open(t, "")
	path := filepath.Join(t.TempDir(), "p.db")
	deletes := func(n int) {
		for range n {
			ev, err := l.NewEvent(wire.TypeDirectoryMutate, "test", contract.DirectoryMutation{Action: contract.ActionDelete, Key: "K"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Append(ctx, wire.DirectorySubject("K"), ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	// openUnrecorded opens the projection after erasing its recorded streams, and
	// its seal: a version that recorded no streams wrote no seal either.
	openUnrecorded := func() *Projector {
		t.Helper()
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketStreams) })
		if cerr := db.Close(); err != nil || cerr != nil {
			t.Fatal(err, cerr)
		}
		if err := os.Remove(sealPath(path)); err != nil {
			t.Fatal(err)
		}
		p, err := Open(Config{Path: path, Log: l})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		return p
	}
	deletes(3)
	p, err := Open(Config{Path: path, Log: l})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CatchUp(ctx, nil); err != nil {
		t.Fatal(err)
	}
	p.Close()

	p = openUnrecorded()
	if err := p.CatchUp(ctx, nil); err != nil {
		t.Fatalf("a projection without a recorded stream, on a log that holds its checkpoint: %v", err)
	}
	st, err := l.State(ctx, wire.ControlStream)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.foldedStream(wire.ControlStream); !got.Equal(st.Created) {
		t.Fatalf("recorded stream created at %v, want %v", got, st.Created)
	}
	p.Close()

	logtest.Recreate(t, l, wire.ControlStream)
	deletes(1)
	p = openUnrecorded()
	err = p.CatchUp(ctx, nil)
	var lb *LogBehindError
	if !errors.As(err, &lb) || lb.Checkpoint != 3 || lb.LastSeq != 1 || !lb.Folded.IsZero() {
		t.Fatalf("err = %v (%+v); want the checkpoint 3 beyond the log's end 1", err, lb)
	}
}
