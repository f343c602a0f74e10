package flowrunner

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/runnertest"
)

// withSub is the flow runner as the dispatcher will call it: every Call carries
// the Invoker. The suite builds its own Calls, so the harness adds it here.
type withSub struct {
	r   *Runner
	sub runner.Invoker
}

func (w withSub) Run(ctx context.Context, c runner.Call) runner.Outcome {
	c.Sub = w.sub
	return w.r.Run(ctx, c)
}

// Failures implements runner.Documented: the flow runner's table.
func (w withSub) Failures() failure.Table { return w.r.Failures() }

// conformanceRows are the rows the suite's flows invoke, standing in for the
// dispatcher and the rows behind it.
func conformanceRows() map[string]handler {
	return map[string]handler{
		"ECHO":  answer(0, func(b string) string { return b }),
		"BLOCK": block(nil),
		"BIG": answer(0, func(b string) string {
			n, _ := strconv.Atoi(b)
			return strings.Repeat("x", n)
		}),
		// DUMP answers with all it received.
		"DUMP": answer(0, func(b string) string { return "received:" + b }),
		"FAIL": answer(0, func(b string) string { return "ERR:fn:fail:" + b }),
	}
}

func flow(key, content string) *contract.Row {
	return &contract.Row{Key: key, Type: contract.TypeFlow, Content: content}
}

// The whole suite applies. The flow runner reads no environment (Config.Env has
// nowhere to go): its secrets scenario checks that a row naming a variable in its
// auth column and its steps, with a caller naming it in the body, never resolves
// it; steps that need credentials get them from their own rows.
func TestConformance(t *testing.T) {
	runnertest.Run(t, runnertest.Harness{
		Name: runner.RunnerFlow,
		New: func(t testing.TB, cfg runnertest.Config) runner.Runner {
			r, err := New(Config{Limits: cfg.Limits})
			if err != nil {
				t.Fatal(err)
			}
			return withSub{r: r, sub: newFake(conformanceRows())}
		},
		Echo:  flow("F_ECHO", "# echo through two steps\nECHO: $1+ => IN\n> ECHO: $IN"),
		Block: flow("F_BLOCK", "ECHO: x > { ECHO: y | BLOCK: z }"),
		Large: flow("F_BIG", "BIG: $1"),
		Secrets: []*contract.Row{
			{Key: "F_DUMP", Type: contract.TypeFlow, Auth: "bearer:" + runnertest.SecretVar,
				Content: "DUMP: $1+|$" + runnertest.SecretVar + "|$$" + runnertest.SecretVar +
					" > { DUMP: $PREV | ECHO: $" + runnertest.SecretVar + " }"},
		},
		Amplify: []*contract.Row{
			flow("F_AMP", "ECHO: "+strings.Repeat("$1", 1000)),
			flow("F_AMP_BRANCH", "{ ECHO: x | ECHO: "+strings.Repeat("$1", 1000)+" }"),
		},
		Failures: []*contract.Row{
			flow("F_EMPTY", "# docs only"),
			flow("F_BAD_STEP", "ECHO: $1 > NOCOLON"),
			flow("F_BAD_KEY", "NOT A KEY: $1"),
			flow("F_BINDING", "ECHO: $1 => lower"),
			flow("F_UNBALANCED", "ECHO: {$1"),
			flow("F_EMPTY_BRANCH", "{ ECHO: $1 | }"),
			flow("F_NESTED", "{ ECHO: $1 | { ECHO: $1 } }"),
			flow("F_WIDE", "{ "+strings.Repeat("ECHO: $1 | ", DefaultMaxFanout)+"ECHO: $1 }"),
			flow("F_STEP_ERR", "ECHO: $1 > FAIL: $PREV > ECHO: never"),
			flow("F_BRANCH_ERR", "{ BLOCK: $1 | FAIL: $1 }"),
			flow("F_REFUSED", "NO_SUCH_ROW: $1"),
			flow("F_EMPTY_STEP", "ECHO: $1 > > ECHO: $1"),
			flow("F_DUPLICATE", "ECHO: $1 => A > ECHO: $1 => A"),
			flow("F_FANOUT_TAIL", "{ ECHO: $1 | ECHO: $1 } ECHO: $1"),
			flow("F_LONG", strings.Repeat("ECHO: $1 > ", DefaultMaxSteps)+"ECHO: $1"),
		},
		Elsewhere: map[string]string{
			"ERR:flow:no_invoker":              "TestRunNoInvoker",
			"ERR:flow:invoke:<step>:<message>": "TestRunRefusalsAndInvokerFailures",
		},
		Sentinels: []error{
			ErrEmpty, ErrEmptyStep, ErrBadStep, ErrBadKey, ErrBadBinding, ErrDuplicateBinding,
			ErrUnbalanced, ErrBadFanout, ErrNestedFanout, ErrEmptyBranch, ErrTooManySteps,
			ErrFanoutTooWide, ErrNoInvoker, ErrInvoke, ErrRefused, ErrStepFailed,
		},
	})
}
