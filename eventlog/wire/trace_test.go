package wire_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/capdir/capdir/eventlog/wire"
)

// A request and a receipt without a trace encode as they did before traces were
// recorded: an old log's events and a receipt written with tracing off are the
// same bytes, so they replay to the same digest and ledger.
func TestUntracedEventsKeepTheirBytes(t *testing.T) {
	req, _ := json.Marshal(wire.InvocationRequest{InvocationID: "inv_a", Trace: "t_a", Key: "K", Body: "b", Credential: wire.OwnerActor})
	if want := `{"invocation_id":"inv_a","trace":"t_a","key":"K","body":"b","credential":"owner:terminal-key"}`; string(req) != want {
		t.Errorf("request = %s\nwant      %s", req, want)
	}
	rc, _ := json.Marshal(wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: "inv_a", Key: "K"}})
	if strings.Contains(string(rc), "trace_id") {
		t.Errorf("untraced receipt holds trace_id: %s", rc)
	}
	traced, _ := json.Marshal(wire.InvocationRequest{Key: "K", Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
	if !strings.Contains(string(traced), `"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"`) {
		t.Errorf("traced request = %s", traced)
	}
}

func TestWithTraceparentRefusesWhatIsNoHeaderValue(t *testing.T) {
	for _, tp := range []string{"", strings.Repeat("a", wire.MaxTraceparentLen+1), "00-a b", "00-\x00", "00-é"} {
		_, err := wire.Invoke(t.Context(), nil, "c1", "K", "", wire.WithTraceparent(tp))
		if !errors.Is(err, wire.ErrBadOption) {
			t.Errorf("WithTraceparent(%.20q) = %v, want ErrBadOption", tp, err)
		}
	}
}

func TestWithTracestateRefusesWhatIsNoHeaderValue(t *testing.T) {
	tp := wire.WithTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	for _, ts := range []string{"", strings.Repeat("a", wire.MaxTracestateLen+1), "congo=t\n61", "rojo=\x00", "rojo=é"} {
		_, err := wire.Invoke(t.Context(), nil, "c1", "K", "", tp, wire.WithTracestate(ts))
		if !errors.Is(err, wire.ErrBadOption) || !strings.Contains(err.Error(), "WithTracestate") {
			t.Errorf("WithTracestate(%.20q) = %v, want ErrBadOption naming it", ts, err)
		}
	}
	// A tracestate belongs to a trace: alone, it is refused before anything is sent.
	for _, send := range []func(...wire.InvokeOption) error{
		func(o ...wire.InvokeOption) error {
			_, err := wire.Invoke(t.Context(), nil, "c1", "K", "", o...)
			return err
		},
		func(o ...wire.InvokeOption) error {
			_, err := wire.Call(t.Context(), nil, "c1", "K", "", o...)
			return err
		},
	} {
		if err := send(wire.WithTracestate("congo=t61rcWkgMzE")); !errors.Is(err, wire.ErrBadOption) || !strings.Contains(err.Error(), "WithTraceparent") {
			t.Errorf("WithTracestate without WithTraceparent = %v, want ErrBadOption naming WithTraceparent", err)
		}
	}
}
