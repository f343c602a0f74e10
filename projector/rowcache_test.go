package projector_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// running opens a projector on l and folds it until the test ends.
func running(t *testing.T, l *eventlog.Log) *projector.Projector {
	t.Helper()
	p := open(t, filepath.Join(t.TempDir(), "p.db"), l)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return p
}

func writeRow(t *testing.T, l *eventlog.Log, p *projector.Projector, action, key, target string) {
	t.Helper()
	m := contract.DirectoryMutation{Action: action, Key: key}
	if action != contract.ActionDelete {
		m.Row = &contract.Row{Key: key, Type: "fn", Target: target, Content: "# WHAT: " + target, Enabled: 1}
	}
	seq := appendEv(t, l, wire.DirectorySubject(key), t0, wire.TypeDirectoryMutate, m)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.WaitFor(ctx, wire.ControlStream, seq); err != nil {
		t.Fatal(err)
	}
}

// The gate's cached rows follow every directory write: once a write is folded, the
// gate returns the new version and its fingerprint, never the cached old one.
// Every read of one version shares one row, which a later write does not change.
func TestGateFollowsDirectoryWrites(t *testing.T) {
	l := logtest.Open(t, "")
	p := running(t, l)
	writeRow(t, l, p, contract.ActionCreate, "K", "echo")
	for i, target := range []string{"now", "echo", "last_reply_of"} {
		g := p.Gate("K", "")
		if g.RowErr != nil {
			t.Fatal(g.RowErr)
		}
		if want := contract.Fingerprint(g.Row); g.Fingerprint != want {
			t.Fatalf("step %d: fingerprint %s, want %s", i, g.Fingerprint, want)
		}
		if again := p.Gate("K", ""); again.Row != g.Row {
			t.Fatalf("step %d: two reads of one version of the row gave two copies", i)
		}
		was := g.Row.Target
		writeRow(t, l, p, contract.ActionReplace, "K", target)
		if g.Row.Target != was {
			t.Fatalf("step %d: the row a call was given changed under it to %q", i, g.Row.Target)
		}
		if g := p.Gate("K", ""); g.RowErr != nil || g.Row.Target != target {
			t.Fatalf("step %d: gate after the write has target %q (%v), want %q", i, g.Row.Target, g.RowErr, target)
		}
	}
	writeRow(t, l, p, contract.ActionDelete, "K", "")
	if g := p.Gate("K", ""); !errors.Is(g.RowErr, projector.ErrNotFound) {
		t.Fatalf("gate after delete: %+v", g)
	}
	// A missing key is not remembered as missing.
	writeRow(t, l, p, contract.ActionCreate, "K", "now")
	if g := p.Gate("K", ""); g.RowErr != nil || g.Row.Target != "now" {
		t.Fatalf("gate after re-create: %+v", g)
	}
}

// Readers filling the cache while writes commit never keep a version older than the
// last write they waited for.
func TestGateCacheUnderConcurrentWrites(t *testing.T) {
	l := logtest.Open(t, "")
	p := running(t, l)
	writeRow(t, l, p, contract.ActionCreate, "K", "v0")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					p.Gate("K", "")
				}
			}
		}()
	}
	for i := 1; i <= 40; i++ {
		target := fmt.Sprintf("v%d", i)
		writeRow(t, l, p, contract.ActionReplace, "K", target)
		if g := p.Gate("K", ""); g.Row.Target != target {
			close(stop)
			wg.Wait()
			t.Fatalf("write %d: gate has %q", i, g.Row.Target)
		}
	}
	close(stop)
	wg.Wait()
}

// A redelivered request's receipt check: with an invocation id the gate reports a
// receipt that exists and reads no row.
func TestGateReceiptCheck(t *testing.T) {
	l := logtest.Open(t, "")
	p := running(t, l)
	writeRow(t, l, p, contract.ActionCreate, "K", "echo")
	seq := appendEv(t, l, wire.ReceiptSubject("K"), t0, wire.TypeReceipt, wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: "inv_done", Key: "K"}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.WaitFor(ctx, wire.DataStream, seq); err != nil {
		t.Fatal(err)
	}
	if g := p.Gate("K", "inv_done"); !g.HasReceipt {
		t.Fatalf("gate for an invocation with a receipt: %+v", g)
	}
	if g := p.Gate("K", "inv_other"); g.HasReceipt || g.RowErr != nil || g.Row.Target != "echo" {
		t.Fatalf("gate for an invocation without one: %+v", g)
	}
}
