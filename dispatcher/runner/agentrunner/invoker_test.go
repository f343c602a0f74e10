package agentrunner

import (
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
)

// fakeInvoker is a runner.Invoker over a map of rows: Row reads it, Tools lists the
// enabled rows of the asked categories (ToolOf each, by key), and Invoke records
// the call and answers with result (KEY(body) by default).
type fakeInvoker struct {
	rows     map[string]*contract.Row
	result   func(key, body string) string
	fail     error // what Invoke returns, when set
	toolsErr error // what Tools returns, when set

	mu      sync.Mutex
	invoked []invocation
	asked   []string // the categories Tools was asked for
}

type invocation struct{ Name, Key, Body string }

var errNoRow = errors.New("no such row")

func newInvoker(rows ...*contract.Row) *fakeInvoker {
	f := &fakeInvoker{rows: map[string]*contract.Row{}}
	for _, r := range rows {
		f.rows[r.Key] = r
	}
	return f
}

func (f *fakeInvoker) Invoke(ctx context.Context, name, key string, in runner.Input) (runner.Step, error) {
	body := in.Text()
	if err := ctx.Err(); err != nil {
		return runner.Step{}, err
	}
	f.mu.Lock()
	f.invoked = append(f.invoked, invocation{name, key, body})
	f.mu.Unlock()
	if f.fail != nil {
		return runner.Step{}, f.fail
	}
	res := key + "(" + body + ")"
	if f.result != nil {
		res = f.result(key, body)
	}
	return runner.Step{InvocationID: "inv_" + name, Status: "PROVEN_MATERIAL_RESULT", Result: res, OK: true}, nil
}

func (f *fakeInvoker) Tools(_ context.Context, categories string) ([]runner.Tool, error) {
	f.mu.Lock()
	f.asked = append(f.asked, categories)
	f.mu.Unlock()
	if f.toolsErr != nil {
		return nil, f.toolsErr
	}
	allowed := map[string]bool{}
	for _, c := range splitList(categories) {
		allowed[c] = true
	}
	var out []runner.Tool
	for _, r := range f.rows {
		if r.Enabled == 1 && (allowed["*"] || allowed[r.Category]) {
			out = append(out, ToolOf(r))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func (f *fakeInvoker) Row(_ context.Context, key string) (*contract.Row, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.rows[key]; ok {
		return r, nil
	}
	return nil, errNoRow
}

func (f *fakeInvoker) set(r *contract.Row) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rows[r.Key] = r
}

func (f *fakeInvoker) invocations() []invocation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]invocation(nil), f.invoked...)
}
