package flowrunner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/allocstest"
)

// testTimeout bounds a test that would otherwise hang on a broken runner (a
// fan-out run one branch after the other never passes its barrier).
const testTimeout = 10 * time.Second

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func TestRunStepsBindingFanout(t *testing.T) {
	both := newBarrier(2)
	concurrently := func(cost float64, f func(string) string) handler {
		return func(ctx context.Context, body string) (runner.Step, error) {
			if err := both.wait(ctx); err != nil {
				return runner.Step{}, err
			}
			return reached(f(body), cost), nil
		}
	}
	inv := newFake(map[string]handler{
		"UPPER": answer(0.5, strings.ToUpper),
		"LEFT":  concurrently(0.25, func(b string) string { return "left(" + b + ")" }),
		"RIGHT": concurrently(0.125, func(b string) string { return "right(" + b + ")" }),
		"JOIN":  answer(0.0625, func(b string) string { return "join(" + b + ")" }),
	})
	// A branch body cannot hold a bare "|"; LEFT gets pipes through $PREV.
	const content = `# three steps: a binding, a fan-out, a join
UPPER: $1+ => U
> { LEFT: $PREV => L | RIGHT: $1 }
> JOIN: $2|$L|$PREV|$U`
	o := newRunner(t, Config{}).Run(testContext(t), runner.Call{Row: flowRow(content), Body: "ab|cd", Sub: inv})

	if want := "join(cd|left(AB|CD)|left(AB|CD)|right(ab)|AB|CD)"; o.Result != want || o.Err != nil {
		t.Fatalf("Result %q, Err %v; want %q", o.Result, o.Err, want)
	}
	if !o.Ran || o.CostUSD != 0.9375 {
		t.Errorf("Ran %v, CostUSD %v; want true, 0.9375", o.Ran, o.CostUSD)
	}
	if want := []string{"inv-1", "inv-2.LEFT", "inv-2.RIGHT", "inv-3"}; !reflect.DeepEqual(o.Children, want) {
		t.Errorf("Children %q, want %q", o.Children, want)
	}
	want := map[string]invocation{
		"1":       {"1", "UPPER", "ab|cd"},
		"2.LEFT":  {"2.LEFT", "LEFT", "AB|CD"},
		"2.RIGHT": {"2.RIGHT", "RIGHT", "ab"},
		"3":       {"3", "JOIN", "cd|left(AB|CD)|left(AB|CD)|right(ab)|AB|CD"},
	}
	if got := inv.names(); !reflect.DeepEqual(got, want) {
		t.Errorf("invocations %v, want %v", got, want)
	}
}

func TestRunPrevBeforeFirstStepIsTheBody(t *testing.T) {
	inv := newFake(map[string]handler{"ECHO": answer(0, func(b string) string { return b })})
	o := newRunner(t, Config{}).Run(testContext(t), runner.Call{Row: flowRow("ECHO: [$PREV] [$2+] [$NOPE]"), Body: "a|b|c", Sub: inv})
	if want := "[a|b|c] [b|c] [$NOPE]"; o.Result != want {
		t.Fatalf("Result %q, want %q", o.Result, want)
	}
}

func TestRunFanoutOutputFeedsNextArguments(t *testing.T) {
	r := newRunner(t, Config{})
	inv := newFake(map[string]handler{
		"ONE":  answer(0, func(string) string { return "one" }),
		"TWO":  answer(0, func(string) string { return "two" }),
		"SHOW": answer(0, func(b string) string { return b }),
	})
	// INNER is itself a flow row: the fan-out's joined output is its body, so its
	// $1 and $2 are the branches' outputs.
	inv.rows["INNER"] = func(ctx context.Context, body string) (runner.Step, error) {
		o := r.Run(ctx, runner.Call{Row: flowRow("SHOW: second=$2 first=$1"), Body: body, Sub: inv})
		return reached(o.Result, 0), nil
	}
	o := r.Run(testContext(t), runner.Call{Row: flowRow("{ ONE: | TWO: } > INNER: $PREV"), Sub: inv})
	if want := "second=two first=one"; o.Result != want {
		t.Fatalf("Result %q, want %q", o.Result, want)
	}
}

func TestRunStopsOnERR(t *testing.T) {
	inv := newFake(map[string]handler{
		"A":    answer(0.5, func(string) string { return "fine" }),
		"FAIL": answer(0.25, func(b string) string { return "ERR:fn:fail:" + b }),
		"C":    answer(1, func(string) string { return "never" }),
	})
	o := newRunner(t, Config{}).Run(testContext(t), runner.Call{Row: flowRow("A: x > FAIL: $PREV > C: $PREV"), Sub: inv})
	if want := "ERR:fn:fail:fine"; o.Result != want || !errors.Is(o.Err, ErrStepFailed) || o.Err.Error() != want {
		t.Fatalf("Result %q, Err %v; want %q matching ErrStepFailed", o.Result, o.Err, want)
	}
	if !o.Ran || o.CostUSD != 0.75 || !reflect.DeepEqual(o.Children, []string{"inv-1", "inv-2"}) {
		t.Errorf("Ran %v, CostUSD %v, Children %q", o.Ran, o.CostUSD, o.Children)
	}
	for _, c := range inv.invoked() {
		if c.Key == "C" {
			t.Fatalf("the step after the ERR was invoked: %+v", c)
		}
	}
}

func TestRunFanoutStopsOnFirstERR(t *testing.T) {
	var exited atomic.Int32
	inv := newFake(map[string]handler{
		// SLOW is first in order; it ends only when the fan-out is cancelled, and then
		// reports a cancellation ERR as a real sub-invocation would.
		"SLOW": func(ctx context.Context, _ string) (runner.Step, error) {
			<-ctx.Done()
			exited.Add(1)
			return reached("ERR:fn:canceled:"+ctx.Err().Error(), 0.5), nil
		},
		"FAIL": answer(0.25, func(string) string { return "ERR:fn:fail:own" }),
		"C":    answer(1, func(string) string { return "never" }),
	})
	o := newRunner(t, Config{}).Run(testContext(t), runner.Call{Row: flowRow("{ SLOW: x | FAIL: y } > C: $PREV"), Sub: inv})
	if want := "ERR:fn:fail:own"; o.Result != want || !errors.Is(o.Err, ErrStepFailed) {
		t.Fatalf("Result %q, Err %v; want %q", o.Result, o.Err, want)
	}
	if exited.Load() != 1 {
		t.Errorf("the slow branch had not returned when Run did")
	}
	if want := []string{"inv-1.SLOW", "inv-1.FAIL"}; !reflect.DeepEqual(o.Children, want) || o.CostUSD != 0.75 {
		t.Errorf("Children %q, CostUSD %v; want %q, 0.75", o.Children, o.CostUSD, want)
	}
	if n := len(inv.invoked()); n != 2 {
		t.Errorf("%d invocations, want 2: %+v", n, inv.invoked())
	}
}

func TestJoinPicksFirstOwnFailure(t *testing.T) {
	// Which branch fails first in time is the scheduler's business; join decides
	// from what each branch came back with: a failure after the fan-out was
	// cancelled is not the branch's own, and among own failures the first in
	// written order wins.
	s := fan("1", "", br("1.A", "A", "", ""), br("1.B", "B", "", ""), br("1.C", "C", "", ""))
	failed := func(out string, own bool) branchResult {
		st := reached(out, 0.5)
		return branchResult{st: st, stop: verdict("x", st, nil), own: own}
	}
	tests := []struct {
		name    string
		results []branchResult
		want    string
	}{
		{"cancelled first, own second", []branchResult{failed("ERR:canceled", false), failed("ERR:two", true), failed("ok", true)}, "ERR:two"},
		{"two own", []branchResult{failed("ok", true), failed("ERR:two", true), failed("ERR:three", true)}, "ERR:two"},
		{"none", []branchResult{failed("a", true), failed("b", true), failed("c", true)}, "a|b|c"},
	}
	for _, tt := range tests {
		e := &execution{vars: map[string]string{}}
		out, err := e.join(context.Background(), s, tt.results)
		if err != nil {
			out = err.Error()
		}
		if out != tt.want || e.out.CostUSD != 1.5 {
			t.Errorf("%s: %q (cost %v), want %q", tt.name, out, e.out.CostUSD, tt.want)
		}
	}
}

func TestRunBadStep(t *testing.T) {
	inv := newFake(map[string]handler{"A": answer(0, func(string) string { return "x" })})
	o := newRunner(t, Config{}).Run(testContext(t), runner.Call{Row: flowRow("A: x > NOCOLON > A: y"), Sub: inv})
	if want := "ERR:flow:bad_step:NOCOLON"; o.Result != want || !errors.Is(o.Err, ErrBadStep) || o.Ran {
		t.Fatalf("got %+v; want %s, not ran", o, want)
	}
	if n := len(inv.invoked()); n != 0 {
		t.Fatalf("%d invocations for a malformed flow", n)
	}
}

func TestRunBounds(t *testing.T) {
	inv := newFake(map[string]handler{"A": answer(0, func(string) string { return "x" })})
	tests := []struct {
		cfg             Config
		content, want   string
		kind            error
		invocations, to int
	}{
		{Config{MaxFanout: 2}, "{ A: 1 | A: 2 | A: 3 }", "ERR:flow:fanout:3>2", ErrFanoutTooWide, 0, 0},
		{Config{MaxFanout: 2}, "A: 0 > { A: 1 | A: 2 } > { A: 1 | A: 2 | A: 3 }", "ERR:flow:fanout:3>2", ErrFanoutTooWide, 0, 0},
		{Config{}, "{ " + strings.Repeat("A: x | ", DefaultMaxFanout) + "A: x }", "ERR:flow:fanout:9>8", ErrFanoutTooWide, 0, 0},
		{Config{MaxSteps: 2}, "A: 1 > A: 2 > A: 3", "ERR:flow:steps:3>2", ErrTooManySteps, 0, 0},
		{Config{}, strings.Repeat("A: x > ", DefaultMaxSteps) + "A: x", "ERR:flow:steps:33>32", ErrTooManySteps, 0, 0},
	}
	for _, tt := range tests {
		r := newRunner(t, tt.cfg)
		for _, shape := range []bool{false, true} {
			o := r.Run(testContext(t), runner.Call{Row: flowRow(tt.content), Sub: inv, Shape: shape})
			if o.Result != tt.want || !errors.Is(o.Err, tt.kind) || o.Ran {
				t.Errorf("%q shape=%v: got %+v; want %s", tt.content, shape, o, tt.want)
			}
		}
	}
	if n := len(inv.invoked()); n != 0 {
		t.Fatalf("%d invocations for flows over the bounds", n)
	}
	// At the bounds, it runs.
	o := newRunner(t, Config{MaxSteps: 2, MaxFanout: 2}).Run(testContext(t), runner.Call{Row: flowRow("A: 1 > { A: 2 | A: 3 }"), Sub: inv})
	if o.Result != "x|x" {
		t.Fatalf("a flow at its bounds: %+v", o)
	}
}

func TestRunCanceledStopsBranches(t *testing.T) {
	inFlight := newBarrier(3) // both branches and the test
	var exited atomic.Int32
	branch := func(ctx context.Context, _ string) (runner.Step, error) {
		defer exited.Add(1)
		if err := inFlight.wait(ctx); err != nil {
			return runner.Step{}, err
		}
		<-ctx.Done()
		return runner.Step{}, ctx.Err()
	}
	inv := newFake(map[string]handler{"B1": branch, "B2": branch, "C": answer(0, func(string) string { return "never" })})
	ctx, cancel := context.WithCancel(testContext(t))
	done := make(chan runner.Outcome, 1)
	go func() {
		done <- newRunner(t, Config{}).Run(ctx, runner.Call{Row: flowRow("{ B1: | B2: } > C:"), Sub: inv})
	}()
	if err := inFlight.wait(testContext(t)); err != nil {
		t.Fatal("the branches never were in flight together:", err)
	}
	cancel()
	o := <-done
	if want := "ERR:flow:canceled:context canceled"; o.Result != want || !errors.Is(o.Err, runner.ErrCanceled) {
		t.Fatalf("got %+v; want %s", o, want)
	}
	if n := exited.Load(); n != 2 {
		t.Errorf("%d branches had returned when Run did, want 2", n)
	}
	if n := len(inv.invoked()); n != 2 {
		t.Errorf("%d invocations, want 2 (the step after the fan-out never runs)", n)
	}
}

func TestRunCanceledStepReportingERR(t *testing.T) {
	// A sub-invocation cut short may come back as a step whose result is its own
	// runner's cancellation: the flow still reports its caller's cancellation.
	ctx, cancel := context.WithCancel(testContext(t))
	inv := newFake(map[string]handler{"A": func(context.Context, string) (runner.Step, error) {
		cancel()
		return reached("ERR:http:canceled:context canceled", 0), nil
	}})
	o := newRunner(t, Config{}).Run(ctx, runner.Call{Row: flowRow("A: x > A: y"), Sub: inv})
	if want := "ERR:flow:canceled:context canceled"; o.Result != want || !o.Ran || len(o.Children) != 1 {
		t.Fatalf("got %+v; want %s, ran, one child", o, want)
	}
}

func TestRunRefusalsAndInvokerFailures(t *testing.T) {
	inv := newFake(map[string]handler{
		"A": answer(0, func(string) string { return "x" }),
		"DEEP": func(context.Context, string) (runner.Step, error) {
			return runner.Step{InvocationID: "inv-deep", Status: wire.StatusRefusedScope, Result: "ERR:depth:5>4"}, nil
		},
		"SCOPED": func(context.Context, string) (runner.Step, error) {
			return runner.Step{InvocationID: "inv-scoped", Status: wire.StatusRefusedScope, Result: "scope:SCOPED"}, nil
		},
		"BROKEN": func(context.Context, string) (runner.Step, error) {
			return runner.Step{}, errors.New("log unavailable")
		},
	})
	tests := []struct {
		content, want string
		kind          error
		children      []string
		ran           bool
	}{
		{"A: x > DEEP: y > A: z", "ERR:depth:5>4", ErrStepFailed, []string{"inv-1", "inv-deep"}, true},
		{"A: x > SCOPED: y > A: z", "ERR:flow:refused:2:scope:SCOPED", ErrRefused, []string{"inv-1", "inv-scoped"}, true},
		{"NOSUCH: x", `ERR:flow:refused:1:{"error":"unknown_key","attempted":"NOSUCH","ran":false,"did_you_mean":[]}`, ErrRefused, []string{"inv-1"}, false},
		{"{ A: x | NOSUCH: y }", `ERR:flow:refused:1.NOSUCH:{"error":"unknown_key","attempted":"NOSUCH","ran":false,"did_you_mean":[]}`, ErrRefused, []string{"inv-1.A", "inv-1.NOSUCH"}, true},
		{"A: x > BROKEN: y", "ERR:flow:invoke:2:log unavailable", ErrInvoke, []string{"inv-1"}, true},
	}
	r := newRunner(t, Config{})
	for _, tt := range tests {
		o := r.Run(testContext(t), runner.Call{Row: flowRow(tt.content), Sub: inv})
		if o.Result != tt.want || !errors.Is(o.Err, tt.kind) || o.Err.Error() != o.Result ||
			!reflect.DeepEqual(o.Children, tt.children) || o.Ran != tt.ran {
			t.Errorf("%q: got %+v; want %s (%v), children %q, ran %v", tt.content, o, tt.want, tt.kind, tt.children, tt.ran)
		}
	}
}

// TestRunRefusalOfAWithheldStep: to a caller other than the owner, the refusal of
// a step or branch whose row its shape withholds names the flow's step and the
// refusal without the row's key (a branch's name holds the key too); a refusal of
// a step it may call keeps its literal, and the owner's flow is told it whole.
func TestRunRefusalOfAWithheldStep(t *testing.T) {
	scoped := func(context.Context, string) (runner.Step, error) {
		return runner.Step{InvocationID: "inv-scoped", Status: wire.StatusRefusedScope, Result: "scope:SCOPED"}, nil
	}
	inv := newFake(map[string]handler{
		"A":      answer(0, func(string) string { return "x" }),
		"SCOPED": scoped,
		"PAY": func(context.Context, string) (runner.Step, error) {
			return runner.Step{InvocationID: "inv-pay", Status: wire.StatusRefusedApprovalRequired, Result: "approval_required:PAY"}, nil
		},
	})
	inv.withheld = map[string]bool{"SCOPED": true}
	tests := []struct {
		content    string
		restricted bool
		want       string
	}{
		{"A: x > SCOPED: y > A: z", true, "ERR:flow:refused:2:scope"},
		{"A: x > { A: y | SCOPED: z }", true, "ERR:flow:refused:2:scope"},
		{"A: x > PAY: y", true, "ERR:flow:refused:2:approval_required:PAY"},
		{"A: x > SCOPED: y > A: z", false, "ERR:flow:refused:2:scope:SCOPED"},
		{"A: x > { A: y | SCOPED: z }", false, "ERR:flow:refused:2.SCOPED:scope:SCOPED"},
	}
	r := newRunner(t, Config{})
	for _, tt := range tests {
		o := r.Run(testContext(t), runner.Call{Row: flowRow(tt.content), Sub: inv, Restricted: tt.restricted})
		if o.Result != tt.want || !errors.Is(o.Err, ErrRefused) || o.Err.Error() != o.Result {
			t.Errorf("%q (restricted %v): got %+v; want %s", tt.content, tt.restricted, o, tt.want)
		}
	}
}

func TestRunNoInvoker(t *testing.T) {
	r := newRunner(t, Config{})
	o := r.Run(testContext(t), runner.Call{Row: flowRow("A: x")})
	if o.Result != "ERR:flow:no_invoker" || !errors.Is(o.Err, ErrNoInvoker) {
		t.Fatalf("got %+v", o)
	}
	if o := r.Run(testContext(t), runner.Call{Row: flowRow("A: x"), Shape: true}); !o.OK() {
		t.Fatalf("shape mode needs no invoker: %+v", o)
	}
	// A restricted caller without an invoker to ask which rows it may call sees
	// every step withheld.
	o = r.Run(testContext(t), runner.Call{Row: flowRow("A: x > { B: y | C: z }"), Shape: true, Restricted: true})
	if b, _ := json.Marshal(o.Shape); !o.OK() || string(b) != `{"runner":"flow","shape":true,"steps":[{"withheld":true},{"branches":[{"withheld":true},{"withheld":true}],"name":"2"}]}` {
		t.Fatalf("restricted shape without an invoker: %s", b)
	}
	if o := r.Run(testContext(t), runner.Call{}); o.Result != "ERR:flow:empty" {
		t.Fatalf("a call without a row: %+v", o)
	}
}

func TestRunSubstitutionBound(t *testing.T) {
	inv := newFake(map[string]handler{"BIG": answer(0, func(string) string { return strings.Repeat("y", 600) })})
	r := newRunner(t, Config{Limits: runner.Limits{MaxSubstitutionBytes: 1000}})
	// The second step would build 1200 bytes from $PREV: refused before it runs.
	o := r.Run(testContext(t), runner.Call{Row: flowRow("BIG: > BIG: $PREV$PREV"), Sub: inv})
	if o.Result != "ERR:substitution_too_large:1000" || !errors.Is(o.Err, runner.ErrSubstitutionTooLarge) || !o.Ran {
		t.Fatalf("got %.100q %v ran=%v", o.Result, o.Err, o.Ran)
	}
	// In a fan-out, one branch that cannot be built leaves every branch unrun.
	o = r.Run(testContext(t), runner.Call{Row: flowRow("BIG: > { BIG: x | BIG: $PREV$PREV }"), Sub: inv})
	if o.Result != "ERR:substitution_too_large:1000" {
		t.Fatalf("got %.100q", o.Result)
	}
	if n := len(inv.invoked()); n != 2 {
		t.Fatalf("%d invocations, want 2 (the first step of each flow)", n)
	}
}

func TestRunSubstitutionIsRaw(t *testing.T) {
	inv := newFake(map[string]handler{"ECHO": answer(0, func(b string) string { return b })})
	const arg = `a "quoted" {json} > & ? %20`
	o := newRunner(t, Config{}).Run(testContext(t), runner.Call{Row: flowRow(`ECHO: {"q":"$1"} > ECHO: $PREV`), Body: arg, Sub: inv})
	if want := `{"q":"` + arg + `"}`; o.Result != want {
		t.Fatalf("Result %q, want %q", o.Result, want)
	}
}

func TestShape(t *testing.T) {
	inv := newFake(nil)
	const content = "# doc\nA: $1 => AX\n> { B: $AX => BX | C: $PREV }\n> D: $9|$2|$BX"
	o := newRunner(t, Config{}).Run(testContext(t), runner.Call{Row: flowRow(content), Body: "one|two", Shape: true, Sub: inv})
	const want = `{"runner":"flow","shape":true,"steps":[` +
		`{"bind":"AX","body":"one","key":"A","name":"1"},` +
		`{"branches":[{"bind":"BX","body":"$AX","key":"B","name":"2.B"},{"body":"$PREV","key":"C","name":"2.C"}],"name":"2"},` +
		`{"body":"|two|$BX","key":"D","name":"3"}]}`
	if o.Result != want || o.Ran || o.Err != nil {
		t.Fatalf("got %s ran=%v err=%v\nwant %s", o.Result, o.Ran, o.Err, want)
	}
	if b, _ := json.Marshal(o.Shape); string(b) != o.Result {
		t.Errorf("Result is not its Shape: %s", b)
	}
	if n := len(inv.invoked()); n != 0 {
		t.Fatalf("shape mode invoked %d steps", n)
	}
}

func TestConfigValidate(t *testing.T) {
	_, err := New(Config{MaxSteps: -1, MaxFanout: -1, Limits: runner.Limits{MaxSubstitutionBytes: -1, MaxResultBytes: -1}})
	for _, field := range []string{"MaxSteps", "MaxFanout", "MaxSubstitutionBytes", "MaxResultBytes"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("New with a negative %s: %v", field, err)
		}
	}
}

func TestBoundsRefuseBeforeBuilding(t *testing.T) {
	// A hostile row of a hundred thousand steps, or of one fan-out that wide, is
	// refused after a scan: the steps and branches past the bound are never built.
	long := strings.Repeat("A: x > ", 100_000) + "A: x"
	wide := "{ " + strings.Repeat("A: x | ", 100_000) + "A: x }"
	b := bounds{steps: DefaultMaxSteps, fanout: DefaultMaxFanout}
	for content, want := range map[string]string{long: "ERR:flow:steps:100001>32", wide: "ERR:flow:fanout:100001>8"} {
		var err error
		allocs := allocstest.PerRun(t, 5, func() { _, err = parse(content, b) })
		if err == nil || err.Error() != want {
			t.Fatalf("got %v, want %s", err, want)
		}
		if allocs > 40 {
			t.Errorf("%s: %v allocations, want the few the bound allows", want, allocs)
		}
	}
}

// Check names the literal every run of a flow that does not parse fails with, as
// Run does, and nothing for one that parses (its keys are not looked up).
func TestCheck(t *testing.T) {
	r, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ content, want string }{
		{"A: x > B: $PREV", ""},
		{"NOSUCHROW: x", ""},
		{"A: x > B", "ERR:flow:bad_step:B"},
		{"# docs only", "ERR:flow:empty"},
		{"A: x > { B: y", "ERR:flow:unbalanced_braces:{ B: y"},
	} {
		row := &contract.Row{Key: "F", Type: "flow", Content: tt.content}
		err := r.Check(row)
		if got := fmt.Sprint(err); (tt.want == "" && err != nil) || (tt.want != "" && got != tt.want) {
			t.Errorf("Check(%q) = %v, want %q", tt.content, err, tt.want)
			continue
		}
		if tt.want != "" {
			if o := r.Run(testContext(t), runner.Call{Row: row}); o.Result != tt.want {
				t.Errorf("Run(%q) = %q; Check said %q", tt.content, o.Result, tt.want)
			}
		}
	}
}
