package projector_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// WaitContext bounds a wait for the projection by Settings.Wait (DefaultWait
// when 0): a Settle on a projection that does not fold ends there, with the
// deadline's error, and the reader goes on with what the projection has.
func TestWaitContextIsTheSettingsWait(t *testing.T) {
	l := logtest.Open(t, "")
	appendMix(t, l, 3)
	for _, tc := range []struct {
		set, want time.Duration
	}{{0, projector.DefaultWait}, {40 * time.Millisecond, 40 * time.Millisecond}} {
		p, err := projector.Open(projector.Config{Path: filepath.Join(t.TempDir(), "p.db"), Log: l, Settings: projector.Settings{Wait: tc.set}})
		if err != nil {
			t.Fatal(err)
		}
		before := time.Now()
		ctx, cancel := p.WaitContext(context.Background())
		after := time.Now()
		dl, ok := ctx.Deadline()
		if !ok || dl.Before(before.Add(tc.want)) || dl.After(after.Add(tc.want)) {
			t.Errorf("Wait %v: deadline %v after the call, want %v", tc.set, dl.Sub(before), tc.want)
		}
		if tc.set > 0 { // not Run: nothing folds, so the wait runs out
			if err := p.Settle(ctx, wire.DataStream); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Settle on a projection that does not fold: %v; want the deadline's error", err)
			}
		}
		cancel()
		p.Close()
	}
	err := projector.Settings{Wait: -time.Second}.Validate()
	if err == nil || !strings.Contains(err.Error(), "projection wait must not be negative") {
		t.Errorf("a negative wait: %v", err)
	}
}
