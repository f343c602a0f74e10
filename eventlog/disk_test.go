package eventlog_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
)

// The embedded log's store on a small tmpfs that fills up: the append that finds
// no space is refused with ErrDiskFull instead of waiting for an answer the server
// never sends, every later append (sync and async) is refused before it is sent,
// and once the disk has room again the log takes appends by itself, with nothing
// refused in it and every acknowledged event read back in order.
func TestFullDiskRefusesAtOnceAndRecovers(t *testing.T) {
	dir := t.TempDir()
	store := eventlog.StoreDir(dir)
	logtest.SmallDisk(t, store, 64<<20)
	l := logtest.Open(t, dir)
	ctx := context.Background()
	var acked []string
	appendOne := func(ctx context.Context, body string) error {
		ev := mustEvent(t, l, wire.TypeDirectoryMutate, map[string]string{"b": body})
		_, err := l.Append(ctx, wire.DirectorySubject("K"), ev)
		if err == nil {
			acked = append(acked, ev.ID)
		}
		return err
	}
	if err := appendOne(ctx, "before"); err != nil {
		t.Fatal(err)
	}
	free := logtest.FillDisk(t, store)

	// The append that meets the full disk: the server answers nothing, so only the
	// guard can end its wait before this minute does.
	big := strings.Repeat("x", 32<<10)
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		actx, cancel := context.WithTimeout(ctx, time.Minute)
		err = appendOne(actx, big)
		cancel()
	}
	if !errors.Is(err, eventlog.ErrDiskFull) {
		t.Fatalf("append on a full disk: %v; want ErrDiskFull", err)
	}
	// Every later append is refused before it is sent, saying what to do.
	err = appendOne(ctx, "small")
	if !errors.Is(err, eventlog.ErrDiskFull) || !strings.Contains(err.Error(), store) || !strings.Contains(err.Error(), "free space on that disk") {
		t.Fatalf("append while full: %v", err)
	}
	if _, err := l.AppendAsync(wire.DirectorySubject("K"), mustEvent(t, l, wire.TypeDirectoryMutate, map[string]string{"b": "async"})); !errors.Is(err, eventlog.ErrDiskFull) {
		t.Fatalf("async append while full: %v", err)
	}

	free()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := appendOne(ctx, "after")
		if err == nil {
			break
		}
		if !errors.Is(err, eventlog.ErrDiskFull) || time.Now().After(deadline) {
			t.Fatalf("append once the disk has room: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // polling the log's recovery
	}
	f, err := l.AppendAsync(wire.DirectorySubject("K"), mustEvent(t, l, wire.TypeDirectoryMutate, map[string]string{"b": "async after"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eventlog.AwaitAck(ctx, f); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := l.Read(ctx, wire.ControlStream, 1, func(s eventlog.Stored) error {
		got = append(got, s.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(acked)+1 || strings.Join(got[:len(acked)], ",") != strings.Join(acked, ",") {
		t.Fatalf("the log holds %d events, want the %d acknowledged and the async one: %v, want %v", len(got), len(acked)+1, got, acked)
	}
	t.Logf("%d events acknowledged, store %s", len(got), filepath.Base(store))
}
