package fnrunner

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"sync"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
)

// Func is a function an fn row can name. args are the elements of the row's
// substituted JSON array template, decoded as encoding/json decodes into any
// (string, float64, bool, nil, []any, map[string]any). The returned text is the
// call's result; a returned error becomes ERR:fn:<name>:<error text>.
//
// A Func runs on the caller's goroutine and must return promptly once ctx is done.
type Func func(ctx context.Context, args []any) (string, error)

// Registry is the runner map of fn rows: function names to Funcs. Names match
// case-insensitively (the NOW row's target "now" and "NOW" name the same function);
// the name as registered is used in error text. It is safe for concurrent use and
// can be extended at any time from Go.
type Registry struct {
	mu sync.RWMutex
	m  map[string]fnEntry
}

type fnEntry struct {
	name string
	f    Func
}

// NewRegistry returns an empty registry; see RegisterBuiltins.
func NewRegistry() *Registry {
	return &Registry{m: make(map[string]fnEntry)}
}

// Register adds f under name, replacing any function registered under the same name
// in any case. It panics on an empty name or a nil f, which are programming errors.
func (r *Registry) Register(name string, f Func) {
	name = strings.TrimSpace(name)
	if name == "" || f == nil {
		panic("fnrunner: Registry.Register: empty name or nil func")
	}
	r.mu.Lock()
	r.m[strings.ToLower(name)] = fnEntry{name: name, f: f}
	r.mu.Unlock()
}

// Lookup returns the function registered under name (any case) and its name as
// registered.
func (r *Registry) Lookup(name string) (f Func, registered string, ok bool) {
	r.mu.RLock()
	e, ok := r.m[strings.ToLower(strings.TrimSpace(name))]
	r.mu.RUnlock()
	return e.f, e.name, ok
}

// Names lists the registered names, sorted.
func (r *Registry) Names() []string {
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

// Config configures the fn runner.
type Config struct {
	// Registry holds the functions rows can name; required.
	Registry *Registry
	// Limits bound a call: a function's result (ERR:fn:result_too_large:<cap>),
	// the rendered argument template, and its time (none by default: the
	// dispatcher's run timeout bounds it; past Timeout the call fails with
	// ERR:fn:canceled:<reason>).
	runner.Limits
}

func (c *Config) setDefaults() { c.Limits = c.Limits.WithDefaults(0) }

// Validate reports every problem with c, joined.
func (c Config) Validate() error {
	var errs []error
	if c.Registry == nil {
		errs = append(errs, errors.New("fnrunner: Config.Registry is required"))
	}
	return errors.Join(append(errs, c.Limits.Validate("fnrunner"))...)
}

// Runner runs fn rows: target names a Func in the registry, and content (after
// stripping # lines) is a JSON array template of its positional arguments,
// substituted in JSON mode; ["$1"] when content has no executable line.
type Runner struct {
	cfg Config
}

// New returns the fn runner over reg with the default limits; see NewWithConfig.
func New(reg *Registry) *Runner {
	cfg := Config{Registry: reg}
	cfg.setDefaults()
	return &Runner{cfg: cfg}
}

// NewWithConfig validates cfg and returns the runner.
func NewWithConfig(cfg Config) (*Runner, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Runner{cfg: cfg}, nil
}

// Run implements Runner. Failures, in order of checking:
// ERR:fn:unknown_target:<name>, ERR:substitution_too_large:<limit>,
// ERR:fn:bad_content_json:<parser message>, ERR:fn:content_not_array,
// ERR:fn:canceled:<reason>, ERR:fn:<name>:<error>, ERR:fn:result_too_large:<cap>.
func (r *Runner) Run(ctx context.Context, c runner.Call) runner.Outcome {
	target := strings.TrimSpace(c.Row.Target)
	f, name, ok := r.cfg.Registry.Lookup(target)
	if !ok {
		return runner.Failed(errUnknownTarget(target))
	}
	fnArgs, err := r.render(c)
	if err != nil {
		return runner.FailedWith(err)
	}
	if c.Shape {
		return runner.Shaped(runner.RedactDeep(map[string]any{"shape": true, "fn": name, "args": fnArgs}, nil).(map[string]any))
	}
	ctx, cancel := r.cfg.Bound(ctx)
	defer cancel()
	if err := ctx.Err(); err != nil {
		return runner.Failed(runner.Canceled(runner.RunnerFn, err))
	}
	out, ferr := f(ctx, fnArgs)
	if ferr != nil {
		if cerr := ctx.Err(); cerr != nil {
			o := runner.Failed(runner.Canceled(runner.RunnerFn, cerr))
			o.Ran = true
			return o
		}
		o := runner.Failed(errFailed(name, ferr))
		o.Ran = true
		return o
	}
	if int64(len(out)) > r.cfg.MaxResultBytes {
		o := runner.Failed(runner.ResultTooLarge(runner.RunnerFn, r.cfg.MaxResultBytes))
		o.Ran = true
		return o
	}
	return runner.Outcome{Result: out, Ran: true}
}

// checkArgs are the arguments Check renders a template with: none, and a "0"
// for each placeholder, a value that is JSON in and out of a string. A template
// that fails with both fails with any.
var checkArgs = [][]string{{}, {"0", "0", "0", "0", "0", "0", "0", "0", "0"}}

// Check implements runner.Checker: ERR:fn:unknown_target:<name> when no function
// of that name is registered now, ERR:fn:bad_content_json:<message> or
// ERR:fn:content_not_array when the template fails whatever the arguments, else
// nil.
func (r *Runner) Check(row *contract.Row) error {
	target := strings.TrimSpace(row.Target)
	if _, _, ok := r.cfg.Registry.Lookup(target); !ok {
		return errUnknownTarget(target)
	}
	var first error
	for _, args := range checkArgs {
		_, err := r.render(runner.Call{Row: row, Args: args})
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// render substitutes the row's template and decodes it into the argument list.
func (r *Runner) render(c runner.Call) ([]any, error) {
	tmpl := runner.Template(c.Row.Content)
	if tmpl == "" {
		tmpl = defaultFnTemplate
	}
	rendered, err := runner.Substitute(tmpl, c.Arguments(), c.Vars, runner.ModeJSON, r.cfg.MaxSubstitutionBytes)
	if err != nil {
		return nil, err
	}
	if args, ok := plainStrings(rendered); ok {
		return args, nil
	}
	var v any
	if err := json.Unmarshal([]byte(rendered), &v); err != nil {
		return nil, errBadContentJSON(err.Error())
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, errContentNotArray()
	}
	return arr, nil
}

// plainStrings reads rendered when it is a JSON array of strings of printable
// ASCII without escapes (the form most templates render to: ["$1","$2"]), as
// json.Unmarshal would into an any: each string cut from rendered instead of
// made. ok is false for anything else, which json.Unmarshal reads.
func plainStrings(rendered string) (args []any, ok bool) {
	s := strings.TrimLeft(rendered, " \t\r\n")
	if !strings.HasPrefix(s, "[") {
		return nil, false
	}
	s = strings.TrimLeft(s[1:], " \t\r\n")
	// Room for the arguments the commas promise, up to a template's usual few:
	// a comma inside a long value must not size the slice.
	args = make([]any, 0, min(strings.Count(s, ",")+1, 8)) // json.Unmarshal's [] is an empty slice, not nil
	if rest, ok := strings.CutPrefix(s, "]"); ok {
		return args, strings.TrimLeft(rest, " \t\r\n") == ""
	}
	for {
		if !strings.HasPrefix(s, `"`) {
			return nil, false
		}
		end := strings.IndexByte(s[1:], '"')
		if end < 0 {
			return nil, false
		}
		text := s[1 : 1+end]
		for i := range len(text) {
			if c := text[i]; c < 0x20 || c >= 0x7f || c == '\\' {
				return nil, false
			}
		}
		args = append(args, text)
		s = strings.TrimLeft(s[2+end:], " \t\r\n")
		switch {
		case strings.HasPrefix(s, ","):
			s = strings.TrimLeft(s[1:], " \t\r\n")
		case strings.HasPrefix(s, "]"):
			return args, strings.TrimLeft(s[1:], " \t\r\n") == ""
		default:
			return nil, false
		}
	}
}
