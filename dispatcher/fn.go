package dispatcher

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"
)

// Func is a function an fn row can name. args are the elements of the row's
// substituted JSON array template, decoded as encoding/json decodes into any
// (string, float64, bool, nil, []any, map[string]any). The returned text is the
// call's result; a returned error becomes ERR:fn:<name>:<error text>.
//
// A Func runs on the caller's goroutine and must return promptly once ctx is done.
type Func func(ctx context.Context, args []any) (string, error)

// FnRegistry is the runner map of fn rows: function names to Funcs. Names match
// case-insensitively (the NOW row's target "now" and "NOW" name the same function);
// the name as registered is used in error text. It is safe for concurrent use and
// can be extended at any time from Go.
type FnRegistry struct {
	mu sync.RWMutex
	m  map[string]fnEntry
}

type fnEntry struct {
	name string
	f    Func
}

// NewFnRegistry returns an empty registry; see RegisterBuiltins.
func NewFnRegistry() *FnRegistry {
	return &FnRegistry{m: make(map[string]fnEntry)}
}

// Register adds f under name, replacing any function registered under the same name
// in any case. It panics on an empty name or a nil f, which are programming errors.
func (r *FnRegistry) Register(name string, f Func) {
	name = strings.TrimSpace(name)
	if name == "" || f == nil {
		panic("dispatcher: FnRegistry.Register: empty name or nil func")
	}
	r.mu.Lock()
	r.m[strings.ToLower(name)] = fnEntry{name: name, f: f}
	r.mu.Unlock()
}

// Lookup returns the function registered under name (any case) and its name as
// registered.
func (r *FnRegistry) Lookup(name string) (f Func, registered string, ok bool) {
	r.mu.RLock()
	e, ok := r.m[strings.ToLower(strings.TrimSpace(name))]
	r.mu.RUnlock()
	return e.f, e.name, ok
}

// Names lists the registered names, sorted.
func (r *FnRegistry) Names() []string {
	r.mu.RLock()
	out := make([]string, 0, len(r.m))
	for _, e := range r.m {
		out = append(out, e.name)
	}
	r.mu.RUnlock()
	sort.Strings(out)
	return out
}

// defaultFnTemplate is used when an fn row's content has no executable line.
const defaultFnTemplate = `["$1"]`

// FnRunner runs fn rows: target names a Func in the registry, and content (after
// stripping # lines) is a JSON array template of its positional arguments,
// substituted in JSON mode; ["$1"] when content has no executable line.
type FnRunner struct {
	reg *FnRegistry
}

// NewFnRunner returns the fn runner over reg.
func NewFnRunner(reg *FnRegistry) *FnRunner { return &FnRunner{reg: reg} }

// Run implements Runner. Failures, in order of checking:
// ERR:fn:unknown_target:<name>, ERR:fn:bad_content_json:<parser message>,
// ERR:fn:content_not_array, ERR:fn:canceled:<reason>, ERR:fn:<name>:<error>.
func (r *FnRunner) Run(ctx context.Context, c Call) Outcome {
	target := strings.TrimSpace(c.Row.Target)
	f, name, ok := r.reg.Lookup(target)
	if !ok {
		return failed(errFnUnknownTarget(target))
	}
	fnArgs, err := r.render(c)
	if err != nil {
		return failed(err)
	}
	if c.Shape {
		return shaped(RedactDeep(map[string]any{"shape": true, "fn": name, "args": fnArgs}, nil).(map[string]any))
	}
	if err := ctx.Err(); err != nil {
		return failed(errCanceled(RunnerFn, err))
	}
	out, ferr := f(ctx, fnArgs)
	if ferr != nil {
		if cerr := ctx.Err(); cerr != nil {
			o := failed(errCanceled(RunnerFn, cerr))
			o.Ran = true
			return o
		}
		o := failed(errFnFailed(name, ferr))
		o.Ran = true
		return o
	}
	return Outcome{Result: out, Ran: true}
}

// render substitutes the row's template and decodes it into the argument list.
func (r *FnRunner) render(c Call) ([]any, *Error) {
	tmpl := template(c.Row.Content)
	if tmpl == "" {
		tmpl = defaultFnTemplate
	}
	rendered := Substitute(tmpl, c.args(), c.Vars, ModeJSON)
	var v any
	if err := json.Unmarshal([]byte(rendered), &v); err != nil {
		return nil, errFnBadContentJSON(err.Error())
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, errFnContentNotArray()
	}
	return arr, nil
}
