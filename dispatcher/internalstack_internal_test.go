package dispatcher

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/fnrunner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// internalStack is a service, not started, over a real log and a projection
// that follows it, holding rows; its fn runner calls fns, and it verifies the
// tokens minter mints.
type internalStack struct {
	s      *Service
	log    *eventlog.Log
	proj   *projector.Projector
	minter *token.Minter
}

// newInternalStack makes an internalStack with settings set and the rows
// folded; fns nil registers the echo function alone. Cleanups registered after
// it run before its projector stops.
func newInternalStack(t *testing.T, set Settings, fns *fnrunner.Registry, rows ...contract.Row) *internalStack {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	l := logtest.Open(t, "")
	p := OpenTestProjection(t, l)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; p.Close() })
	minter, tokens := NewTestTokens(t)
	if fns == nil {
		fns = fnrunner.NewRegistry()
		fns.Register("echo", fnrunner.Echo)
	}
	s, err := NewService(ServiceConfig{Log: l, Projector: p, Logger: quiet, Settings: set, Tokens: tokens,
		Runners: runner.Runners{runner.RunnerFn: fnrunner.New(fns)}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		ev, _ := wire.NewEvent(time.Now(), wire.TypeDirectoryMutate, "test", contract.DirectoryMutation{Action: contract.ActionCreate, Key: rows[i].Key, Row: &rows[i]})
		if _, err := l.Append(ctx, wire.DirectorySubject(rows[i].Key), ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Settle(ctx, wire.ControlStream); err != nil {
		t.Fatal(err)
	}
	return &internalStack{s: s, log: l, proj: p, minter: minter}
}
