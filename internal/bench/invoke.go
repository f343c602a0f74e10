package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
)

// EchoBody is the argument every fn invocation sends.
const EchoBody = "hello, capdir benchmark"

// NATSInvoke returns an Op that invokes the echo row as a bus client making many
// calls does (a wire.Client on a connection made by Env.ConnectBus: the request
// event in, the receipt notice out) and checks the result. A bus client is never
// the owner: it presents the capability token tok (Env.MintToken for EchoKey).
func NATSInvoke(c *wire.Client, tok string) Op {
	withToken := wire.WithToken(tok)
	return func(ctx context.Context, i int) error {
		rc, err := c.Invoke(ctx, EchoKey, EchoBody, withToken)
		if err != nil {
			return err
		}
		if !rc.OK || rc.Result != EchoBody {
			return fmt.Errorf("bench: nats invocation %d: ok=%v result %q", i, rc.OK, rc.Result)
		}
		return nil
	}
}

// NATSCall returns an Op that invokes the echo row as one request-reply to the
// bus client's call subject (wire.Call on a connection made by Env.ConnectBus:
// the request event in, the receipt as the reply), with the capability token tok,
// and checks the result.
func NATSCall(nc *nats.Conn, tok string) Op {
	withToken := wire.WithToken(tok)
	return func(ctx context.Context, i int) error {
		rc, err := wire.Call(ctx, nc, BusClient, EchoKey, EchoBody, withToken)
		if err != nil {
			return err
		}
		if !rc.OK || rc.Result != EchoBody {
			return fmt.Errorf("bench: nats call %d: ok=%v result %q", i, rc.OK, rc.Result)
		}
		return nil
	}
}

// HTTPInvoke returns an Op that invokes the echo row through POST /api/dispatch and
// checks the answer.
func (e *Env) HTTPInvoke() Op {
	want := []byte(`"result":"` + EchoBody + `"`)
	return func(ctx context.Context, i int) error {
		out, err := e.Dispatch(ctx, EchoKey, EchoBody, http.StatusOK)
		if err != nil {
			return err
		}
		if !bytes.Contains(out, want) {
			return fmt.Errorf("bench: dispatch %d: unexpected answer %s", i, out)
		}
		return nil
	}
}

// Invocations measures op at 1 and at par callers in flight.
func Invocations(ctx context.Context, scenario, via string, op Op, nSeq, nPar, par int, budget time.Duration, stored func() uint64) ([]Result, error) {
	var out []Result
	for _, c := range []struct{ conc, n int }{{1, nSeq}, {par, nPar}} {
		r, err := Invocation(ctx, scenario, "fn via "+via+", "+strconv.Itoa(c.conc)+" in flight", op, c.n, c.conc, budget, stored)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Invocation measures op at conc callers in flight after a warm-up, as the row
// named measure. stored, when not nil, is the data stream's last sequence: the
// row then notes the messages the log stored per invocation.
func Invocation(ctx context.Context, scenario, measure string, op Op, n, conc int, budget time.Duration, stored func() uint64) (Result, error) {
	if err := warmup(ctx, max(200, n/20), conc, op); err != nil {
		return Result{}, fmt.Errorf("bench: %s warm-up: %w", scenario, err)
	}
	var s0 uint64
	if stored != nil {
		s0 = stored()
	}
	lat, el, err := Drive(ctx, n, conc, budget, op)
	if err != nil {
		return Result{}, fmt.Errorf("bench: %s: %w", scenario, err)
	}
	r := rateResult(scenario, measure, "invocations", len(lat), el, lat)
	if stored != nil && len(lat) > 0 {
		per := float64(stored()-s0) / float64(len(lat))
		r.Note = joinNote(r.Note, fmt.Sprintf("%.2f stored messages per invocation", per))
		if r.Values == nil {
			r.Values = map[string]float64{}
		}
		r.Values["stored_per_invocation"] = per
	}
	return r, nil
}

// StoredMessages is the data stream's last sequence on e's node (0 when it
// cannot be read): what Invocation counts stored messages with.
func (e *Env) StoredMessages() uint64 {
	seq, _ := e.Node.Log().LastSeq(context.Background(), wire.DataStream)
	return seq
}
