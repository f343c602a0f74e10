package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
)

// Parallel is the in-flight count of the concurrent invocation rows.
const Parallel = 64

// Run runs the scenarios cfg selects, in the order of Scenarios, and returns their
// results. Throughput rows carry their ratio to the async publish floor when the
// floor was measured in the same run.
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(cfg.Dir, "capdir-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	c := cfg.counts()
	r := &runner{cfg: cfg, c: c, dir: dir}
	if err := r.shared(ctx); err != nil {
		return r.results, err
	}
	if cfg.wants(ScenarioTracing) {
		r.progress(ScenarioTracing, "fn over POST /api/dispatch, tracing off vs on, 1 and %d in flight", Parallel)
		ecfg := EnvConfig{Dir: dir + "/tracing", Sync: cfg.Sync, Workers: cfg.Workers, Logger: cfg.Logger}
		res, err := Tracing(ctx, ecfg, c.invokeSeq, c.invokePar, Parallel, c.budget)
		if err != nil {
			return r.results, err
		}
		r.add(res...)
	}
	if cfg.wants(ScenarioReplay) {
		r.progress(ScenarioReplay, "generating %d events, then rebuilding", c.replayEvents)
		res, err := Replay(ctx, dir, cfg.Sync, c.replayEvents)
		if err != nil {
			return r.results, err
		}
		r.add(res...)
	}
	if cfg.wants(ScenarioDirectory) {
		r.progress(ScenarioDirectory, "importing %d rows", c.directoryRows)
		e, err := StartEnv(ctx, EnvConfig{Dir: dir + "/directory", Sync: cfg.Sync, Workers: cfg.Workers, Logger: cfg.Logger})
		if err != nil {
			return r.results, err
		}
		res, err := Directory(ctx, e, c.directoryRows, c.lookups, c.budget)
		e.Close()
		if err != nil {
			return r.results, err
		}
		r.add(res...)
	}
	return r.results, nil
}

type runner struct {
	cfg     Config
	c       counts
	dir     string
	floor   float64
	results []Result
}

func (r *runner) progress(name, format string, args ...any) {
	fmt.Fprintf(r.cfg.Progress, "bench: %-9s "+format+"\n", append([]any{name}, args...)...)
}

// add records results, setting the floor ratio of invocation rows.
func (r *runner) add(res ...Result) {
	for i := range res {
		if res[i].Unit == "invocations" && res[i].Rate > 0 && r.floor > 0 && res[i].Floor == 0 && res[i].Scenario != ScenarioHTTPRow && res[i].Scenario != ScenarioMCPUpstream {
			res[i].Floor = res[i].Rate / r.floor
		}
	}
	r.results = append(r.results, res...)
}

// shared runs the scenarios that share one node: floor, nats, http, mcp, httprow,
// flow.
func (r *runner) shared(ctx context.Context) error {
	need := false
	for _, s := range []string{ScenarioFloor, ScenarioNATS, ScenarioHTTP, ScenarioMCP, ScenarioReference, ScenarioHTTPRow, ScenarioMCPUpstream, ScenarioFlow} {
		need = need || r.cfg.wants(s)
	}
	if !need {
		return nil
	}
	e, err := StartEnv(ctx, EnvConfig{Dir: r.dir + "/shared", Sync: r.cfg.Sync, Workers: r.cfg.Workers, NATSListen: r.cfg.wants(ScenarioNATS) || r.cfg.wants(ScenarioReference), Logger: r.cfg.Logger})
	if err != nil {
		return err
	}
	defer e.Close()
	c := r.c
	// The floor is measured whenever invocations are, so their ratio can be shown.
	if r.cfg.wants(ScenarioFloor) || r.cfg.wants(ScenarioNATS) || r.cfg.wants(ScenarioHTTP) || r.cfg.wants(ScenarioMCP) || r.cfg.wants(ScenarioReference) {
		r.progress(ScenarioFloor, "%d async and up to %d sync publishes (sync %s)", c.floorAsync, c.floorSync, r.cfg.Sync)
		f, err := MeasureFloor(ctx, e.Node.Log().JetStream(), c.floorAsync, c.floorSync, c.budget)
		if err != nil {
			return err
		}
		r.floor = f.Async.Rate
		r.add(f.Async, f.Sync)
	}
	if r.cfg.wants(ScenarioNATS) {
		r.progress(ScenarioNATS, "fn over the request subject, then as one request-reply, 1 and %d in flight", Parallel)
		tok, err := e.MintToken(ctx, BusClient, time.Hour, EchoKey)
		if err != nil {
			return err
		}
		nc, err := e.ConnectBus(nats.Name("capdir-bench"))
		if err != nil {
			return fmt.Errorf("bench: connect bus client: %w", err)
		}
		bc, err := wire.NewClient(nc, BusClient)
		if err != nil {
			nc.Close()
			return fmt.Errorf("bench: bus client: %w", err)
		}
		res, err := Invocations(ctx, ScenarioNATS, "the NATS request subject", NATSInvoke(bc, tok), c.invokeSeq, c.invokePar, Parallel, c.budget, e.Counts)
		bc.Close()
		if err == nil {
			var calls []Result
			calls, err = Invocations(ctx, ScenarioNATS, "a NATS call (request-reply)", NATSCall(nc, tok), c.invokeSeq, c.invokePar, Parallel, c.budget, e.Counts)
			res = append(res, calls...)
		}
		nc.Close()
		if err != nil {
			return err
		}
		r.add(res...)
	}
	if r.cfg.wants(ScenarioHTTP) {
		r.progress(ScenarioHTTP, "fn over POST /api/dispatch, 1 and %d in flight, then %d with a lean client", Parallel, Parallel)
		res, err := Invocations(ctx, ScenarioHTTP, "POST /api/dispatch", e.HTTPInvoke(), c.invokeSeq, c.invokePar, Parallel, c.budget, e.Counts)
		if err != nil {
			return err
		}
		r.add(res...)
		// net/http's client costs a good share of the CPU at 64 callers; the lean
		// client's row is closer to what the server alone can do.
		lean, err := Invocation(ctx, ScenarioHTTP, "fn via POST /api/dispatch, "+strconv.Itoa(Parallel)+" in flight (lean client)",
			e.RawHTTPInvoke(), c.invokePar, Parallel, c.budget, e.Counts)
		if err != nil {
			return err
		}
		r.add(lean)
		// A caller other than the owner presents a capability token: the verifier's
		// cache makes every call after the first cost a hash and a lookup.
		tok, err := e.MintToken(ctx, "bench", time.Hour, EchoKey)
		if err != nil {
			return err
		}
		bearer, err := Invocation(ctx, ScenarioHTTP, "fn via POST /api/dispatch, "+strconv.Itoa(Parallel)+" in flight (capability token)",
			e.HTTPInvokeToken(tok), c.invokePar, Parallel, c.budget, e.Counts)
		if err != nil {
			return err
		}
		r.add(bearer)
	}
	if r.cfg.wants(ScenarioMCP) {
		r.progress(ScenarioMCP, "fn over MCP tools/call (one streamable HTTP session) and POST /api/dispatch, interleaved, 1 and %d in flight, with the SDK's client and a lean one, then the SDK's over %d sessions", Parallel, MCPSessions)
		if err := r.mcp(ctx, e); err != nil {
			return err
		}
	}
	if r.cfg.wants(ScenarioReference) {
		r.progress(ScenarioReference, "a hand-tuned pipeline of the same shape against capdir, interleaved, %d in flight, then the same pipeline packed against it", Parallel)
		if err := r.reference(ctx, e); err != nil {
			return err
		}
	}
	if r.cfg.wants(ScenarioHTTPRow) {
		r.progress(ScenarioHTTPRow, "http row vs the upstream directly, %d rounds", c.httpRow)
		res, err := HTTPRow(ctx, e, c.httpRow, c.budget)
		if err != nil {
			return err
		}
		r.add(res...)
	}
	if r.cfg.wants(ScenarioMCPUpstream) {
		r.progress(ScenarioMCPUpstream, "an mcp row through /mcp vs its upstream directly, %d rounds", c.httpRow)
		res, err := MCPUpstream(ctx, e, c.httpRow, c.budget)
		if err != nil {
			return err
		}
		r.add(res...)
	}
	if r.cfg.wants(ScenarioFlow) {
		r.progress(ScenarioFlow, "a 3-step fn flow vs one fn call over POST /api/dispatch, 1 and %d in flight", Parallel)
		res, err := Flow(ctx, e, c.flowSeq, c.flowPar, Parallel, c.budget)
		if err != nil {
			return err
		}
		r.add(res...)
	}
	return nil
}

// mcp measures the echo row through MCP tools/call, one session shared by every
// caller, against POST /api/dispatch with the same kind of client, interleaved
// (Paired): Go's clients (the SDK's and net/http's), then the lean one, at 1 and
// Parallel in flight. Each MCP row notes its rate as a ratio to the dispatch row
// measured with it.
func (r *runner) mcp(ctx context.Context, e *Env) error {
	cs, err := e.MCPSession(ctx)
	if err != nil {
		return err
	}
	defer cs.Close()
	lean, closeLean, err := e.MCPLeanInvoke(cs)
	if err != nil {
		return err
	}
	defer closeLean()
	for _, k := range []struct {
		client         string
		dispatch, call Op
	}{{"", e.HTTPInvoke(), MCPInvoke(cs)}, {" (lean client)", e.RawHTTPInvoke(), lean}} {
		for _, x := range []struct{ conc, n int }{{1, r.c.invokeSeq}, {Parallel, r.c.invokePar}} {
			inFlight := ", " + strconv.Itoa(x.conc) + " in flight" + k.client
			ref, got, err := Paired(ctx, ScenarioMCP, "fn via POST /api/dispatch"+inFlight+" (reference)", "fn via MCP tools/call"+inFlight,
				k.dispatch, k.call, x.n, x.conc, r.c.budget)
			if err != nil {
				return err
			}
			got.noteRatio(ref, "POST /api/dispatch", "http_ratio")
			r.add(ref, got)
		}
	}
	return r.mcpSessions(ctx, e)
}
