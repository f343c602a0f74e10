package runner

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/capdir/capdir/contract"
)

type stubRunner string

func (s stubRunner) Run(context.Context, Call) Outcome { return Outcome{Result: string(s), Ran: true} }

func TestRunners(t *testing.T) {
	rs := Runners{RunnerFn: stubRunner("fn ran"), "edge": stubRunner("edge ran")}
	tests := []struct {
		row  contract.Row
		want string
	}{
		{contract.Row{Type: "fn"}, "fn ran"},
		{contract.Row{Type: "fn", Runner: "edge"}, "edge ran"},
		{contract.Row{Type: "http"}, "ERR:runner:unknown:http"},
		{contract.Row{Type: "flow", Runner: "warp"}, "ERR:runner:unknown:warp"},
	}
	for _, tt := range tests {
		o := rs.Run(context.Background(), Call{Row: &tt.row})
		if o.Result != tt.want {
			t.Errorf("Run(%+v) = %q, want %q", tt.row, o.Result, tt.want)
		}
	}
	if _, err := rs.Lookup("nats"); !errors.Is(err, ErrUnknownRunner) || err.Error() != "ERR:runner:unknown:nats" {
		t.Errorf("Lookup err = %v", err)
	}
}

func TestOutcomeOK(t *testing.T) {
	for _, tt := range []struct {
		res string
		ok  bool
	}{{"HTTP 200:{}", true}, {"", true}, {"ERR:x", false}, {"err:x", true}, {" ERR:x", true}} {
		if got := (Outcome{Result: tt.res}).OK(); got != tt.ok {
			t.Errorf("OK(%q) = %v", tt.res, got)
		}
	}
}

func ExampleRunners() {
	rs := Runners{RunnerFn: stubRunner("hello")}

	row := &contract.Row{Key: "ECHO", Type: "fn", Target: "echo"}
	o := rs.Run(context.Background(), Call{Row: row, Body: "world"})
	fmt.Println(o.Result, o.OK(), o.Ran)

	row = &contract.Row{Key: "SHELL", Type: "fn", Runner: "shell"}
	o = rs.Run(context.Background(), Call{Row: row})
	fmt.Println(o.Result, o.OK())
	// Output:
	// hello true true
	// ERR:runner:unknown:shell false
}
