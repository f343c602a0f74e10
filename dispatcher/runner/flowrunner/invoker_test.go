package flowrunner

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog/wire"
)

// handler answers one invocation of a fake row.
type handler func(ctx context.Context, body string) (runner.Step, error)

// invocation is one Invoke the fake received.
type invocation struct{ Name, Key, Body string }

// fakeInvoker stands in for the dispatcher: it answers each key with its handler,
// refuses a key it has none for as the gate does, gives each invocation the id
// "inv-<name>", and records every Invoke. Row lets the caller call each key it
// has a handler for, except those in withheld.
type fakeInvoker struct {
	rows     map[string]handler
	withheld map[string]bool

	mu    sync.Mutex
	calls []invocation
}

var _ runner.Invoker = (*fakeInvoker)(nil)

func newFake(rows map[string]handler) *fakeInvoker { return &fakeInvoker{rows: rows} }

func (f *fakeInvoker) Invoke(ctx context.Context, name, key string, in runner.Input) (runner.Step, error) {
	body := in.Text()
	f.mu.Lock()
	f.calls = append(f.calls, invocation{name, key, body})
	f.mu.Unlock()
	h, ok := f.rows[key]
	if !ok {
		return runner.Step{InvocationID: "inv-" + name, Status: wire.StatusRefusedUnknownKey,
			Result: `{"error":"unknown_key","attempted":"` + key + `","ran":false,"did_you_mean":[]}`}, nil
	}
	st, err := h(ctx, body)
	if err == nil && st.InvocationID == "" {
		st.InvocationID = "inv-" + name
	}
	return st, err
}

func (f *fakeInvoker) Tools(context.Context, string) ([]runner.Tool, error) {
	return nil, errors.New("fake: Tools is not used by flows")
}

func (f *fakeInvoker) Row(_ context.Context, key string) (*contract.Row, error) {
	if _, ok := f.rows[key]; !ok || f.withheld[key] {
		return nil, errors.New("fake: no row the caller may call")
	}
	return &contract.Row{Key: key, Type: "fn", Enabled: 1}, nil
}

// invoked returns the invocations so far, in the order they were made.
func (f *fakeInvoker) invoked() []invocation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]invocation(nil), f.calls...)
}

// names returns the invocations by step name (branches run in any order).
func (f *fakeInvoker) names() map[string]invocation {
	m := map[string]invocation{}
	for _, c := range f.invoked() {
		m[c.Name] = c
	}
	return m
}

// reached is a step that reached its target and answered out, costing cost.
func reached(out string, cost float64) runner.Step {
	st := runner.Step{Result: out, CostUSD: cost, OK: !strings.HasPrefix(out, "ERR:"), Status: wire.StatusProvenMaterialResult}
	if !st.OK {
		st.Status = wire.StatusRanWithError
	}
	return st
}

// answer is a row that maps its body to its output, at cost.
func answer(cost float64, f func(body string) string) handler {
	return func(_ context.Context, body string) (runner.Step, error) { return reached(f(body), cost), nil }
}

// block is a row that answers only when its context ends, as a real invocation does:
// with an error once the Invoker gives up waiting.
func block(started func()) handler {
	return func(ctx context.Context, _ string) (runner.Step, error) {
		if started != nil {
			started()
		}
		<-ctx.Done()
		return runner.Step{}, ctx.Err()
	}
}

// barrier lets n callers through only once all n have arrived, so a test proves
// they were in flight at the same time; a caller whose context ends first gives up.
type barrier struct {
	mu      sync.Mutex
	n       int
	arrived int
	all     chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, all: make(chan struct{})} }

func (b *barrier) wait(ctx context.Context) error {
	b.mu.Lock()
	if b.arrived++; b.arrived == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func newRunner(t testing.TB, cfg Config) *Runner {
	t.Helper()
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func flowRow(content string) *contract.Row {
	return &contract.Row{Key: "FLOW", Type: contract.TypeFlow, Content: content}
}
