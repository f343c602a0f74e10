package projector_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// Rebuild folds the whole log into a fresh bbolt file and swaps it in: deleting the
// projection and rebuilding it gives back the same state.
func ExampleRebuild() {
	dir, _ := os.MkdirTemp("", "projector-example")
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	l, err := eventlog.Open(ctx, eventlog.Config{DataDir: dir, Logger: quiet})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	row := contract.Row{Key: "GREET", Type: "fn", Target: "echo", Content: "# WHAT: Greet.", Enabled: 1}
	ev, _ := l.NewEvent(wire.TypeDirectoryMutate, "owner:terminal-key", contract.DirectoryMutation{Action: contract.ActionCreate, Key: "GREET", Row: &row})
	if _, err := l.Append(ctx, wire.DirectorySubject("GREET"), ev); err != nil {
		fmt.Println(err)
		return
	}

	cfg := projector.Config{Path: filepath.Join(dir, "projection.db"), Log: l, Logger: quiet}
	if err := projector.Rebuild(ctx, cfg, nil); err != nil {
		fmt.Println(err)
		return
	}
	p, err := projector.Open(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	got, _, err := p.Row("GREET")
	fmt.Println(got.Key, got.Target, p.Applied(wire.ControlStream), err)
	// Output: GREET echo 1 <nil>
}
