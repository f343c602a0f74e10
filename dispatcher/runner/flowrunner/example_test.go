package flowrunner_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/flowrunner"
	"github.com/capdir/capdir/eventlog/wire"
)

func ExampleParse() {
	plan, err := flowrunner.Parse(`# WHAT: greet in two languages, then pick one
GREET: $1 => NAME
> { EN: Hello, $NAME => HELLO | FR: Bonjour, $NAME }
> PICK: $2|$PREV`)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range plan.Steps {
		if s.Fanout() {
			for _, b := range s.Branches {
				fmt.Printf("%s %s: %s => %q\n", b.Name, b.Key, b.Body, b.Bind)
			}
			continue
		}
		fmt.Printf("%s %s: %s => %q\n", s.Name, s.Key, s.Body, s.Bind)
	}
	fmt.Println(plan)

	_, err = flowrunner.Parse("GREET: $1 > oops")
	fmt.Println(err, errors.Is(err, flowrunner.ErrBadStep))
	// Output:
	// 1 GREET: $1 => "NAME"
	// 2.EN EN: Hello, $NAME => "HELLO"
	// 2.FR FR: Bonjour, $NAME => ""
	// 3 PICK: $2|$PREV => ""
	// GREET: $1 => NAME
	// > { EN: Hello, $NAME => HELLO | FR: Bonjour, $NAME }
	// > PICK: $2|$PREV
	// ERR:flow:bad_step:oops true
}

// rows is a tiny stand-in for the dispatcher: each key upper-cases or reverses
// its body. A real Invoker runs the row through the gate and records a receipt.
type rows struct{}

func (rows) Invoke(_ context.Context, name, key string, in runner.Input) (runner.Step, error) {
	body := in.Body
	out := body
	switch key {
	case "UPPER":
		out = strings.ToUpper(body)
	case "REVERSE":
		r := []rune(body)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		out = string(r)
	}
	return runner.Step{InvocationID: "inv-" + name, Status: wire.StatusProvenMaterialResult, Result: out, OK: true, CostUSD: 0.001}, nil
}

func (rows) Tools(context.Context, string) ([]runner.Tool, error) { return nil, nil }
func (rows) Row(context.Context, string) (*contract.Row, error)   { return nil, nil }

func ExampleNew() {
	r, err := flowrunner.New(flowrunner.Config{MaxFanout: 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	row := &contract.Row{Key: "SHOUT_BOTH", Type: contract.TypeFlow,
		Content: "# ARGS: word | word\n{ UPPER: $1 | REVERSE: $2 => R } > ECHO: $PREV / $R"}
	o := r.Run(context.Background(), runner.Call{Row: row, Body: "hello|world", Sub: rows{}})
	fmt.Println(o.Result)
	fmt.Println(o.Ran, o.Children, fmt.Sprintf("%.3f", o.CostUSD))

	o = r.Run(context.Background(), runner.Call{Row: row, Body: "hello|world", Shape: true})
	fmt.Println(o.Result)
	// Output:
	// HELLO|dlrow / dlrow
	// true [inv-1.UPPER inv-1.REVERSE inv-2] 0.003
	// {"runner":"flow","shape":true,"steps":[{"branches":[{"body":"hello","key":"UPPER","name":"1.UPPER"},{"bind":"R","body":"world","key":"REVERSE","name":"1.REVERSE"}],"name":"1"},{"body":"$PREV / $R","key":"ECHO","name":"2"}]}
}
