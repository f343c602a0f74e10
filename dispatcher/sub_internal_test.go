package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog/wire"
)

// toolsService is a service over a real log and projection holding rows, with
// the echo function.
func toolsService(t *testing.T, rows ...contract.Row) *Service {
	t.Helper()
	return newInternalStack(t, Settings{Workers: 1}, nil, rows...).s
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
	highHolder := s.invoker(context.Background(), call, d, false, &token.Claims{
		Subject: "partner", Risk: token.RiskHigh, Scope: token.Scope{Keys: []string{"B", "SECRET"}},
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
		{"token", holder, "tools", []string{"B"}},          // SECRET is sensitive: over a low ceiling
		{"token", holder, "*", []string{"B", "C", "D"}},    // C by its category
		{"high token", highHolder, "tools", []string{"B"}}, // a step to SECRET would be refused: not offered
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

// A step invoked with an arguments object runs with its pipe form; invoked again
// under the same name (a redelivered parent), the same object finds the stored
// receipt and reuses it, another object is refused as another body, and an
// object the gate refused is found by its text.
func TestStepWithArgumentsIsFoundAgainByThem(t *testing.T) {
	find := toolRow("FIND", "tools")
	find.Target, find.Content = "echo", "# WHAT: find\n# ARGS: $1=q | $2=mode\n[\"$1/$2\"]"
	find.InputSchema = `{"type":"object","properties":{"q":{"type":"string"},"mode":{"type":"string","enum":["fast","deep"]}},"required":["q","mode"]}`
	s := toolsService(t, find)
	call := &wire.InvocationRequest{InvocationID: "inv_parent", Key: "AGENT", Credential: wire.OwnerActor}
	v := s.invoker(context.Background(), call, newDraft(call, wire.OwnerActor, "w", time.Now()), true, nil, nil)
	ctx := context.Background()
	invoke := func(name, args string) (runner.Step, error) {
		t.Helper()
		st, err := v.Invoke(ctx, name, "FIND", runner.Input{Args: json.RawMessage(args)})
		if err := s.cfg.Projector.Settle(ctx, wire.DataStream); err != nil {
			t.Fatal(err)
		}
		return st, err
	}
	first, err := invoke("tool-1", `{"q":"hello","mode":"deep"}`)
	if err != nil || !first.OK || first.Result != "hello/deep" {
		t.Fatalf("first: %+v, %v", first, err)
	}
	if again, err := invoke("tool-1", `{"mode":"deep","q":"hello"}`); err != nil || again != first {
		t.Fatalf("the same object again: %+v, %v; want the stored step %+v", again, err, first)
	}
	if _, err := invoke("tool-1", `{"q":"bye","mode":"deep"}`); !errors.Is(err, ErrStepMismatch) {
		t.Fatalf("another object under the step's name: %v, want ErrStepMismatch", err)
	}
	refused, err := invoke("tool-2", `{"q":"hello","mode":"slow"}`)
	if err != nil || refused.Status != wire.StatusRefusedInput {
		t.Fatalf("an object outside the enum: %+v, %v", refused, err)
	}
	if again, err := invoke("tool-2", `{"q":"hello","mode":"slow"}`); err != nil || again != refused {
		t.Fatalf("the refused object again: %+v, %v; want the stored refusal", again, err)
	}
}
