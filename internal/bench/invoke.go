package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"runtime"
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
func Invocations(ctx context.Context, scenario, via string, op Op, nSeq, nPar, par int, budget time.Duration, count func() Counts) ([]Result, error) {
	var out []Result
	for _, c := range []struct{ conc, n int }{{1, nSeq}, {par, nPar}} {
		r, err := Invocation(ctx, scenario, "fn via "+via+", "+strconv.Itoa(c.conc)+" in flight", op, c.n, c.conc, budget, count)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Counts are the node's counters Invocation reads before and after a run: the
// data stream's last sequence, and the messages the node's connection to the log
// received and sent.
type Counts struct {
	Stored, In, Out uint64
}

// Counts reads e's node's counters (Stored 0 when the stream cannot be read).
func (e *Env) Counts() Counts {
	st := e.Node.Log().Conn().Stats()
	return Counts{Stored: e.StoredMessages(), In: st.InMsgs, Out: st.OutMsgs}
}

// Invocation measures op at conc callers in flight after a warm-up, as the row
// named measure. The row's values give, per invocation, the process's CPU time
// (user and system, every goroutine's: the load generator's, the node's and its
// embedded server's), allocations and bytes allocated, and, when count is not
// nil, the messages the log stored and the node's connection received and sent;
// its note gives the first four.
func Invocation(ctx context.Context, scenario, measure string, op Op, n, conc int, budget time.Duration, count func() Counts) (Result, error) {
	if err := warmup(ctx, max(200, n/20), conc, op); err != nil {
		return Result{}, fmt.Errorf("bench: %s warm-up: %w", scenario, err)
	}
	var c0 Counts
	if count != nil {
		c0 = count()
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := CPUTime()
	lat, el, err := Drive(ctx, n, conc, budget, op)
	cpu := CPUTime() - cpu0
	runtime.ReadMemStats(&m1)
	if err != nil {
		return Result{}, fmt.Errorf("bench: %s: %w", scenario, err)
	}
	r := rateResult(scenario, measure, "invocations", len(lat), el, lat)
	if len(lat) == 0 {
		return r, nil
	}
	per := func(d uint64) float64 { return float64(d) / float64(len(lat)) }
	r.Values = map[string]float64{
		"cpu_us_per_invocation": float64(cpu.Nanoseconds()) / 1e3 / float64(len(lat)),
		"allocs_per_invocation": per(m1.Mallocs - m0.Mallocs),
		"bytes_per_invocation":  per(m1.TotalAlloc - m0.TotalAlloc),
	}
	var note string
	if count != nil {
		c := count()
		r.Values["stored_per_invocation"] = per(c.Stored - c0.Stored)
		r.Values["msgs_in_per_invocation"] = per(c.In - c0.In)
		r.Values["msgs_out_per_invocation"] = per(c.Out - c0.Out)
		note = fmt.Sprintf("%.2f stored messages, ", r.Values["stored_per_invocation"])
	}
	r.Note = joinNote(r.Note, fmt.Sprintf("%s%.0f µs of CPU, %.0f allocations, %.1f KB per invocation", note,
		r.Values["cpu_us_per_invocation"], r.Values["allocs_per_invocation"], r.Values["bytes_per_invocation"]/1000))
	return r, nil
}

// StoredMessages is the data stream's last sequence on e's node (0 when it
// cannot be read): what Invocation counts stored messages with.
func (e *Env) StoredMessages() uint64 {
	seq, _ := e.Node.Log().LastSeq(context.Background(), wire.DataStream)
	return seq
}
