package fnrunner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
)

// fixedClock is 2026-07-26T04:36:19.832Z.
func fixedClock() time.Time { return time.Date(2026, 7, 26, 4, 36, 19, 832e6, time.UTC) }

func newTestRunner(t testing.TB) *Runner {
	t.Helper()
	reg := NewRegistry()
	if err := RegisterBuiltins(reg, BuiltinConfig{Clock: fixedClock}); err != nil {
		t.Fatal(err)
	}
	reg.Register("concat", func(_ context.Context, args []any) (string, error) {
		parts := make([]string, len(args))
		for i, a := range args {
			parts[i] = fmt.Sprint(a)
		}
		return strings.Join(parts, "+"), nil
	})
	reg.Register("fail", func(context.Context, []any) (string, error) { return "", errors.New("boom") })
	reg.Register("block", func(ctx context.Context, _ []any) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	return New(reg)
}

const nowContent = `# Return the current time from the build clock in Pacific time (America/Los_Angeles).
# WHEN_TO_USE: any object or model that needs the current date or time.
# ARGS: none
# EX: [NOW][/NOW]
# OUTPUT: { now, today, time, zone, iso } — Pacific-offset ISO; today is the Pacific calendar date.`

func TestFnRunner(t *testing.T) {
	r := newTestRunner(t)
	tests := []struct {
		name    string
		target  string
		content string
		body    string
		want    string
		wantRan bool
		wantErr error
	}{
		{"NOW row", "now", nowContent, "",
			`{"now":1785040579832,"today":"2026-07-25","time":"21:36:19","zone":"America/Los_Angeles","iso":"2026-07-25T21:36:19.832-07:00"}`,
			true, nil},
		{"target any case", "NOW", "", "", `{"now":1785040579832,"today":"2026-07-25","time":"21:36:19","zone":"America/Los_Angeles","iso":"2026-07-25T21:36:19.832-07:00"}`, true, nil},
		{"unknown target", "nope", "", "", "ERR:fn:unknown_target:nope", false, ErrUnknownTarget},
		{"default template", "echo", "# docs only", `say "hi"|x`, `say "hi"`, true, nil},
		{"template", "concat", "# ARGS: a | b\n[\"$2\", \"$1\", 3]", "a|b", "b+a+3", true, nil},
		{"quote cannot break template", "concat", `["$1"]`, `x","y`, `x","y`, true, nil},
		{"bad json", "echo", `[$1]`, "not json", "ERR:fn:bad_content_json:invalid character 'o' in literal null (expecting 'u')", false, ErrBadContentJSON},
		{"not array", "echo", `{"a":"$1"}`, "x", "ERR:fn:content_not_array", false, ErrContentNotArray},
		{"function error", "fail", "", "", "ERR:fn:fail:boom", true, ErrFailed},
		{"last reply", "last_reply_of", "", "[REPLY]one[/REPLY] then [REPLY] two [/REPLY] tail", "two", true, nil},
		{"no reply block", "LAST_REPLY_OF", "", "no tags", "ERR:fn:last_reply_of:no_reply_block", true, ErrNoReplyBlock},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := &contract.Row{Key: "K", Type: "fn", Target: tt.target, Content: tt.content}
			o := r.Run(context.Background(), runner.Call{Row: row, Body: tt.body})
			if o.Result != tt.want {
				t.Errorf("Result = %s\n want %s", o.Result, tt.want)
			}
			if o.Ran != tt.wantRan {
				t.Errorf("Ran = %v, want %v", o.Ran, tt.wantRan)
			}
			if o.OK() != (tt.wantErr == nil) {
				t.Errorf("OK = %v", o.OK())
			}
			if tt.wantErr != nil && !errors.Is(o.Err, tt.wantErr) {
				t.Errorf("Err = %v, want %v", o.Err, tt.wantErr)
			}
		})
	}
}

func TestFnRunnerVarsAndShape(t *testing.T) {
	r := newTestRunner(t)
	row := &contract.Row{Key: "LAST_REPLY_OF", Type: "fn", Target: "last_reply_of", Content: `["$PREV"]`}
	o := r.Run(context.Background(), runner.Call{Row: row, Vars: map[string]string{"PREV": "[REPLY]hi[/REPLY]"}})
	if o.Result != "hi" {
		t.Errorf("Result = %q", o.Result)
	}
	o = r.Run(context.Background(), runner.Call{Row: row, Vars: map[string]string{"PREV": "x"}, Shape: true})
	if o.Result != `{"args":["x"],"fn":"last_reply_of","shape":true}` || o.Ran || o.Shape == nil {
		t.Errorf("shape = %+v", o)
	}
}

func TestFnRunnerCancel(t *testing.T) {
	r := newTestRunner(t)
	row := &contract.Row{Key: "B", Type: "fn", Target: "block"}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	o := r.Run(ctx, runner.Call{Row: row})
	if o.Result != "ERR:fn:canceled:context deadline exceeded" || !errors.Is(o.Err, runner.ErrCanceled) {
		t.Errorf("got %+v", o)
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if o := r.Run(ctx, runner.Call{Row: &contract.Row{Target: "echo"}}); o.Ran || !errors.Is(o.Err, runner.ErrCanceled) {
		t.Errorf("cancelled before run: %+v", o)
	}
}

// Limits.Timeout bounds a call: a function still running then is cancelled.
func TestFnRunnerTimeout(t *testing.T) {
	r := newTestRunner(t)
	r.cfg.Timeout = 20 * time.Millisecond
	o := r.Run(context.Background(), runner.Call{Row: &contract.Row{Key: "B", Type: "fn", Target: "block"}})
	if o.Result != "ERR:fn:canceled:context deadline exceeded" || !errors.Is(o.Err, runner.ErrCanceled) {
		t.Errorf("got %+v", o)
	}
}

func TestLastReplyOf(t *testing.T) {
	tests := []struct{ in, want string }{
		{"[REPLY]a[/REPLY]", "a"},
		{"x [REPLY] a [/REPLY] y [REPLY]b[/REPLY] z", "b"},
		{"[REPLY]a[/REPLY] [REPLY]unclosed", "a"},
		{"[REPLY]outer [REPLY]inner[/REPLY]", "inner"},
		{"[REPLY][/REPLY]", ""},
		{"multi\n[REPLY]\nline one\nline two\n[/REPLY]\n", "line one\nline two"},
	}
	for _, tt := range tests {
		got, err := LastReplyOf(context.Background(), []any{tt.in})
		if err != nil || got != tt.want {
			t.Errorf("LastReplyOf(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "[/REPLY]", "[REPLY]open", "[reply]x[/reply]"} {
		if _, err := LastReplyOf(context.Background(), []any{in}); !errors.Is(err, ErrNoReplyBlock) {
			t.Errorf("LastReplyOf(%q) err = %v", in, err)
		}
	}
}

func TestEcho(t *testing.T) {
	for _, tt := range []struct {
		args []any
		want string
	}{{nil, ""}, {[]any{"a", "b"}, "a"}, {[]any{1.5}, "1.5"}, {[]any{map[string]any{"k": true}}, `{"k":true}`}, {[]any{nil}, ""}} {
		if got, _ := Echo(context.Background(), tt.args); got != tt.want {
			t.Errorf("Echo(%v) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

func TestBuiltinConfig(t *testing.T) {
	reg := NewRegistry()
	err := RegisterBuiltins(reg, BuiltinConfig{Zone: "Mars/Olympus"})
	if err == nil || !strings.Contains(err.Error(), "Clock is required") || !strings.Contains(err.Error(), "Mars/Olympus") {
		t.Fatalf("err = %v", err)
	}
	if err := RegisterBuiltins(reg, BuiltinConfig{Clock: fixedClock, Zone: "Asia/Tokyo"}); err != nil {
		t.Fatal(err)
	}
	f, _, _ := reg.Lookup("now")
	out, _ := f(context.Background(), nil)
	if !strings.Contains(out, `"today":"2026-07-26","time":"13:36:19","zone":"Asia/Tokyo","iso":"2026-07-26T13:36:19.832+09:00"`) {
		t.Errorf("now = %s", out)
	}
}

func TestFnConfigValidate(t *testing.T) {
	_, err := NewWithConfig(Config{Limits: runner.Limits{MaxResultBytes: -1, MaxSubstitutionBytes: -1}})
	for _, want := range []string{"Registry is required", "MaxResultBytes", "MaxSubstitutionBytes"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to mention %q", err, want)
		}
	}
	reg := NewRegistry()
	r, err := NewWithConfig(Config{Registry: reg})
	if err != nil || r.cfg.MaxResultBytes != runner.DefaultMaxResultBytes || r.cfg.MaxSubstitutionBytes != runner.DefaultMaxSubstitutionBytes {
		t.Errorf("defaults: %+v, %v", r.cfg, err)
	}
	if New(reg).cfg != r.cfg {
		t.Errorf("New and NewWithConfig differ in defaults")
	}
}

func TestFnRegistryConcurrent(t *testing.T) {
	reg := NewRegistry()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			reg.Register(fmt.Sprintf("f%d", i), Echo)
		}()
		go func() {
			defer wg.Done()
			reg.Lookup("f0")
			reg.Names()
		}()
	}
	wg.Wait()
	if n := len(reg.Names()); n != 8 {
		t.Errorf("names = %d", n)
	}
	reg.Register("F0", Echo) // same name, other case: replaces
	if _, name, ok := reg.Lookup("f0"); !ok || name != "F0" || len(reg.Names()) != 8 {
		t.Errorf("replace by case: %q %v %v", name, ok, reg.Names())
	}
}

func ExampleRunner() {
	reg := NewRegistry()
	clock := func() time.Time { return time.Date(2026, 7, 26, 4, 36, 19, 0, time.UTC) }
	if err := RegisterBuiltins(reg, BuiltinConfig{Clock: clock}); err != nil {
		panic(err)
	}
	reg.Register("upper", func(_ context.Context, args []any) (string, error) {
		s, _ := args[0].(string)
		return strings.ToUpper(s), nil
	})
	fn := New(reg)
	now := &contract.Row{Key: "NOW", Type: "fn", Target: "now", Content: "# Return the current time.\n# ARGS: none"}
	fmt.Println(fn.Run(context.Background(), runner.Call{Row: now}).Result)

	up := &contract.Row{Key: "UPPER", Type: "fn", Target: "upper", Content: "# ARGS: text\n[\"$1+\"]"}
	fmt.Println(fn.Run(context.Background(), runner.Call{Row: up, Body: "a|b"}).Result)

	bad := &contract.Row{Key: "BAD", Type: "fn", Target: "upper", Content: `{"x":"$1"}`}
	fmt.Println(fn.Run(context.Background(), runner.Call{Row: bad}).Result)
	// Output:
	// {"now":1785040579000,"today":"2026-07-25","time":"21:36:19","zone":"America/Los_Angeles","iso":"2026-07-25T21:36:19.000-07:00"}
	// A|B
	// ERR:fn:content_not_array
}

// Check names the literal every call of a row will fail with, whatever its
// arguments, and nothing for a row some call of which may run.
func TestFnRunnerCheck(t *testing.T) {
	r := newTestRunner(t)
	for _, tt := range []struct {
		name, target, content string
		want                  string // "" when a call may run
	}{
		{"unknown target", "nope", `["$1"]`, "ERR:fn:unknown_target:nope"},
		{"target any case", "ECHO", "", ""},
		{"docs only", "echo", "# WHAT: say", ""},
		{"not an array", "echo", `{"a":"$1"}`, "ERR:fn:content_not_array"},
		{"not JSON", "echo", `["$1"`, "ERR:fn:bad_content_json:unexpected end of JSON input"},
		{"unquoted placeholder", "echo", `[$1]`, ""},
		{"two unquoted placeholders", "concat", `[$1, $2]`, ""},
		{"rest of the arguments", "concat", `["$1", "$2+"]`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			row := &contract.Row{Key: "K", Type: "fn", Target: tt.target, Content: tt.content}
			err := r.Check(row)
			if got := fmt.Sprint(err); (tt.want == "" && err != nil) || (tt.want != "" && got != tt.want) {
				t.Fatalf("Check = %v, want %q", err, tt.want)
			}
			if tt.want == "" {
				return
			}
			if o := r.Run(context.Background(), runner.Call{Row: row, Body: "x"}); o.Result != tt.want {
				t.Fatalf("Run = %q; Check said %q", o.Result, tt.want)
			}
		})
	}
}
