package flowrunner

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/fnrunner"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/testdata"
)

// sampleRow returns the fixture row called key.
func sampleRow(t *testing.T, key string) *contract.Row {
	t.Helper()
	var rows []contract.Row
	if err := json.Unmarshal(testdata.SampleRows(), &rows); err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if rows[i].Key == key {
			return &rows[i]
		}
	}
	t.Fatalf("no row %s in the fixture", key)
	return nil
}

// rowHandler runs row with rs, as the dispatcher runs a sub-invocation, and
// reports it as a step.
func rowHandler(rs runner.Runners, row *contract.Row) handler {
	return func(ctx context.Context, body string) (runner.Step, error) {
		o := rs.Run(ctx, runner.Call{Row: row, Body: body})
		st := runner.Step{Result: o.Result, OK: o.OK(), CostUSD: o.CostUSD}
		switch {
		case o.OK() && o.Ran:
			st.Status = wire.StatusProvenMaterialResult
		case o.Ran:
			st.Status = wire.StatusRanWithError
		default:
			st.Status = wire.StatusFailedBeforeRun
		}
		return st, nil
	}
}

// sent records what the SEND_BY_CHANNEL stand-in was asked to send.
type sent struct {
	mu    sync.Mutex
	calls [][]any
}

func (s *sent) send(_ context.Context, args []any) (string, error) {
	s.mu.Lock()
	s.calls = append(s.calls, args)
	s.mu.Unlock()
	b, err := json.Marshal(map[string]any{"ok": true, "channel": args[0], "to": args[1], "text": args[2]})
	return string(b), err
}

func TestSampleFlowRow(t *testing.T) {
	row := sampleRow(t, "BLOOIO_FINISH")
	const want = "# Phase C of the inbound turn: given the full agent output text in $1, extract the\n" +
		"# LAST [REPLY], send via blooio to $2, return the send result.\n" +
		"# $1=agent output text. $2=recipient phone.\n" +
		"LAST_REPLY_OF: $1\n> SEND_BY_CHANNEL: blooio|$2|$PREV"
	if row.Type != contract.TypeFlow || row.Content != want {
		t.Fatalf("fixture row: type %q content %q", row.Type, row.Content)
	}

	var out sent
	reg := fnrunner.NewRegistry()
	reg.Register("last_reply_of", fnrunner.LastReplyOf)
	reg.Register("send_by_channel", out.send)
	rs := runner.Runners{runner.RunnerFn: fnrunner.New(reg)}
	inv := newFake(map[string]handler{
		"LAST_REPLY_OF":   rowHandler(rs, &contract.Row{Key: "LAST_REPLY_OF", Type: contract.TypeFn, Target: "last_reply_of", Content: `["$1+"]`}),
		"SEND_BY_CHANNEL": rowHandler(rs, &contract.Row{Key: "SEND_BY_CHANNEL", Type: contract.TypeFn, Target: "send_by_channel", Content: `["$1", "$2", "$3+"]`}),
	})
	r := newRunner(t, Config{})

	t.Run("sends the last reply", func(t *testing.T) {
		agent := "thinking...[REPLY]draft[/REPLY] more [REPLY] Your order shipped! \"2 boxes\" [/REPLY]"
		o := r.Run(testContext(t), runner.Call{Row: row, Body: agent + "|+15551234567", Sub: inv})
		if want := `{"channel":"blooio","ok":true,"text":"Your order shipped! \"2 boxes\"","to":"+15551234567"}`; o.Result != want || !o.Ran || o.Err != nil {
			t.Fatalf("got %+v\nwant %s", o, want)
		}
		if want := [][]any{{"blooio", "+15551234567", `Your order shipped! "2 boxes"`}}; !reflect.DeepEqual(out.calls, want) {
			t.Errorf("sent %q, want %q", out.calls, want)
		}
		if want := []string{"inv-1", "inv-2"}; !reflect.DeepEqual(o.Children, want) {
			t.Errorf("Children %q, want %q", o.Children, want)
		}
	})
	t.Run("no reply block stops before sending", func(t *testing.T) {
		out.calls = nil
		o := r.Run(testContext(t), runner.Call{Row: row, Body: "no reply here|+15551234567", Sub: inv})
		if want := "ERR:fn:last_reply_of:no_reply_block"; o.Result != want || !errors.Is(o.Err, ErrStepFailed) {
			t.Fatalf("got %+v, want %s", o, want)
		}
		if len(out.calls) != 0 {
			t.Fatalf("sent anyway: %q", out.calls)
		}
	})
	t.Run("shape", func(t *testing.T) {
		o := r.Run(testContext(t), runner.Call{Row: row, Body: "[REPLY]hi[/REPLY]|+15551234567", Shape: true})
		const want = `{"runner":"flow","shape":true,"steps":[` +
			`{"body":"[REPLY]hi[/REPLY]","key":"LAST_REPLY_OF","name":"1"},` +
			`{"body":"blooio|+15551234567|$PREV","key":"SEND_BY_CHANNEL","name":"2"}]}`
		if o.Result != want || o.Ran {
			t.Fatalf("got %s, want %s", o.Result, want)
		}
	})
}
