package dispatcher

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/fnrunner"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// toolsService is a service over a real log and projection holding rows.
func toolsService(t *testing.T, rows ...contract.Row) *Service {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	l := logtest.Open(t, "")
	p, err := projector.Open(projector.Config{Path: filepath.Join(t.TempDir(), "p.db"), Log: l, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; p.Close() })
	_, tokens := NewTestTokens(t)
	s, err := NewService(ServiceConfig{Log: l, Projector: p, Logger: quiet, Settings: Settings{Workers: 1}, Tokens: tokens,
		Runners: runner.Runners{runner.RunnerFn: fnrunner.New(fnrunner.NewRegistry())}})
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
	return s
}

func toolRow(key, category string) contract.Row {
	return contract.Row{Key: key, Type: "fn", Target: "echo", Category: category, Content: "# WHAT: " + key, Enabled: 1, PlannerVisible: 1}
}

func toolKeys(tools []runner.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Key)
	}
	return out
}

// Tools lists the enabled, planner-visible rows of the categories that the caller
// may invoke, without the calling row; Row reads a row the caller may invoke and
// answers ErrNoRow alike for a missing, disabled or out-of-scope one.
func TestInvokerToolsAndRowFollowTheCaller(t *testing.T) {
	hidden, off, secret := toolRow("HIDDEN", "tools"), toolRow("OFF", "tools"), toolRow("SECRET", "tools")
	hidden.PlannerVisible, off.Enabled, secret.Sensitive = 0, 0, 1
	s := toolsService(t, toolRow("AGENT", "tools"), toolRow("A", "tools"), toolRow("B", "tools"), toolRow("C", "misc"),
		toolRow("D", "more"), hidden, off, secret)
	call := &wire.InvocationRequest{InvocationID: "inv_x", Key: "AGENT"}
	d := newDraft(call, "owner:terminal-key", "w", time.Now())
	owner := s.invoker(context.Background(), call, d, true, nil, nil)
	holder := s.invoker(context.Background(), call, d, false, &token.Claims{
		Subject: "partner", Risk: token.RiskLow,
		Scope: token.Scope{Keys: []string{"B", "D", "SECRET"}, Categories: []string{"misc"}},
	}, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		who  string
		inv  runner.Invoker
		cats string
		want []string
	}{
		{"owner", owner, "tools", []string{"A", "B", "SECRET"}},
		{"owner", owner, "tools, misc", []string{"A", "B", "SECRET", "C"}},
		{"owner", owner, "*", []string{"A", "B", "C", "D", "SECRET"}},
		{"owner", owner, "", nil},
		{"token", holder, "tools", []string{"B"}},       // SECRET is sensitive: over a low ceiling
		{"token", holder, "*", []string{"B", "C", "D"}}, // C by its category
	} {
		tools, err := tc.inv.Tools(ctx, tc.cats)
		if err != nil {
			t.Fatal(err)
		}
		if got := toolKeys(tools); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s Tools(%q) = %q, want %q", tc.who, tc.cats, got, tc.want)
		}
	}
	for _, tc := range []struct {
		who  string
		inv  runner.Invoker
		key  string
		want error
	}{
		{"owner", owner, "HIDDEN", nil}, // a prompt block hidden from planners can be included
		{"owner", owner, "OFF", ErrNoRow},
		{"owner", owner, "NONE", ErrNoRow},
		{"token", holder, "B", nil},
		{"token", holder, "A", ErrNoRow},
		{"token", holder, "SECRET", ErrNoRow},
	} {
		row, err := tc.inv.Row(ctx, tc.key)
		if !errors.Is(err, tc.want) || tc.want == nil && (row == nil || row.Key != tc.key) {
			t.Errorf("%s Row(%s) = %v, %v; want %v", tc.who, tc.key, row, err, tc.want)
		}
	}
}
