package fnrunner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/runnertest"
)

func TestConformance(t *testing.T) {
	amplified := `["` + strings.Repeat("$1", 1000) + `"]`
	runnertest.Run(t, runnertest.Harness{
		Name: runner.RunnerFn,
		New: func(t testing.TB, cfg runnertest.Config) runner.Runner {
			reg := NewRegistry()
			reg.Register("echo", Echo)
			reg.Register("block", func(ctx context.Context, _ []any) (string, error) {
				<-ctx.Done()
				return "", ctx.Err()
			})
			reg.Register("big", func(_ context.Context, args []any) (string, error) {
				s, _ := argText(args, 0)
				n, err := strconv.Atoi(s)
				return strings.Repeat("x", n), err
			})
			// dump answers with everything it received.
			reg.Register("dump", func(_ context.Context, args []any) (string, error) { return fmt.Sprintf("%#v", args), nil })
			reg.Register("fail", func(context.Context, []any) (string, error) { return "", errors.New("boom") })
			// fn reads no environment: Env has nowhere to go.
			r, err := NewWithConfig(Config{Registry: reg, Limits: cfg.Limits})
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
		Echo:  &contract.Row{Key: "ECHO", Type: contract.TypeFn, Target: "echo", Content: `["$1+"]`},
		Block: &contract.Row{Key: "BLOCK", Type: contract.TypeFn, Target: "block"},
		Large: &contract.Row{Key: "BIG", Type: contract.TypeFn, Target: "big"},
		Secrets: []*contract.Row{{Key: "DUMP", Type: contract.TypeFn, Target: "dump", Auth: "bearer:" + runnertest.SecretVar,
			Content: `["$1+", "$` + runnertest.SecretVar + `", "$$` + runnertest.SecretVar + `"]`}},
		Amplify: []*contract.Row{{Key: "AMP", Type: contract.TypeFn, Target: "echo", Content: amplified}},
		Failures: []*contract.Row{
			{Key: "F1", Type: contract.TypeFn, Target: "nope"},
			{Key: "F2", Type: contract.TypeFn, Target: "echo", Content: `[$1]`},
			{Key: "F3", Type: contract.TypeFn, Target: "echo", Content: `{"a":"$1"}`},
			{Key: "F4", Type: contract.TypeFn, Target: "fail"},
		},
		Sentinels: []error{ErrUnknownTarget, ErrBadContentJSON, ErrContentNotArray, ErrFailed, ErrNoReplyBlock},
	})
}
