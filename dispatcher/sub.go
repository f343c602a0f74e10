package dispatcher

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/dispatcher/gate"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/tracing"
	"github.com/capdir/capdir/projector"
)

// Steps. A composing runner (flow, agent) runs other rows through its call's
// runner.Invoker, the invoker below. Each step is a real invocation: its own
// INVOCATION_REQUESTED event (on wire.StepSubject, which no worker consumes),
// the same gate as its parent's call (the parent caller's credential and token,
// so its scope, the breaker and every other check apply as they would to a call
// the caller made itself), its own receipt naming the parent and sharing its
// trace. A step runs inline, in the worker that runs the parent: a flow waiting
// for its steps never waits for a free worker, so any number of flows in flight
// cannot starve the workers their steps need, and the parent's request is kept
// in progress while they run.
//
// A step's invocation id is derived from its parent's and its name
// (StepInvocationID), so a redelivered parent finds the steps that completed
// before the crash by their receipts and reuses their results instead of running
// them again.

// DefaultMaxDepth is ServiceConfig.MaxDepth's default: a top-level call's steps
// are at depth 1, theirs at 2, …; a step deeper than the bound is refused.
const DefaultMaxDepth = 8

// DefaultMaxTreeSteps is ServiceConfig.MaxTreeSteps's default: the steps one
// top-level call may make, at every depth together.
const DefaultMaxTreeSteps = 1024

// MaxTools bounds the rows one Invoker.Tools call lists (what OpenAI-compatible
// servers accept in one request).
const MaxTools = 128

const (
	// maxStepNameLen bounds a step name: a flow's branch name carries its key.
	maxStepNameLen = 256
	// maxStepIDLen bounds a step's invocation id; a longer one is a digest.
	maxStepIDLen = 200
	// maxChildrenBytes bounds the JSON of a receipt's children list, which takes
	// its room from the event's envelope reserve.
	maxChildrenBytes = 16 << 10
	// toolsPage is how many rows Tools reads at once.
	toolsPage = 256
)

// StepInvocationID is the invocation id of the step called name of the call
// parent: parent, '-', and name with each '.' replaced by '~' ("inv_…-3~SEND" for
// the branch "3.SEND"), since an invocation id is a subject token. An id that
// would be longer than 200 bytes is "inv_s" and 32 hex digits of a SHA-256 of
// both instead.
func StepInvocationID(parent, name string) string {
	id := parent + "-" + strings.ReplaceAll(name, ".", "~")
	if len(id) <= maxStepIDLen {
		return id
	}
	h := sha256.Sum256([]byte(parent + "\x00" + name))
	return wire.InvocationPrefix + "s" + hex.EncodeToString(h[:16])
}

// lineage is where a call sits in its call tree.
type lineage struct {
	// stop is the context of the worker running the top-level call. Once it ends
	// (Stop, a drain past its deadline) every call of the tree is cut short
	// without a receipt, and the top-level request is handed back to run again.
	stop  context.Context
	depth int      // 0 for a top-level call
	chain []string // the keys from the top-level call down to this one
	// steps counts the steps of the whole tree: one counter, made for the
	// top-level call and shared by every call under it.
	steps *atomic.Int64
}

// guard refuses a step of key made by the call at l: a key already on the chain
// (a cycle), a step deeper than maxDepth, or one past the tree's maxSteps.
func (l *lineage) guard(key string, maxDepth, maxSteps int) *failure.Error {
	if slices.Contains(l.chain, key) {
		return errCycle(l.chain, key)
	}
	if l.depth+1 > maxDepth {
		return errTooDeep(l.depth+1, maxDepth)
	}
	if n := l.steps.Add(1); n > int64(maxSteps) {
		return errTreeSteps(n, maxSteps)
	}
	return nil
}

// invoker is the runner.Invoker of one call. It is safe for concurrent use (a
// fan-out's branches invoke at once): it only reads its fields.
type invoker struct {
	s      *Service
	req    *wire.InvocationRequest // the call's request: id, trace, key, credential, token
	d      *draft                  // the call's receipt: its actor
	owner  bool                    // capdir attests the caller is the owner
	claims *token.Claims           // the caller's verified token; nil for the owner
	up     *lineage                // the call's parent; nil for a top-level call
	stop   context.Context         // see lineage.stop
	steps  *atomic.Int64           // see lineage.steps
	own    atomic.Int64            // steps of a top-level call, made with it
}

// invoker is the Invoker a call's runner gets: ctx is the context run was given
// (the worker's, for a top-level call), owner and claims what the gate admitted
// the call as, up the call's own place in its tree (nil for a top-level call).
func (s *Service) invoker(ctx context.Context, req *wire.InvocationRequest, d *draft, owner bool, claims *token.Claims, up *lineage) runner.Invoker {
	v := &invoker{s: s, req: req, d: d, owner: owner, claims: claims, up: up, stop: ctx}
	if up != nil {
		v.stop, v.steps = up.stop, up.steps
	} else {
		v.steps = &v.own
	}
	return v
}

// lineage is the call's own place: its parent's, one deeper, its key appended.
func (v *invoker) lineage() lineage {
	if v.up == nil {
		return lineage{stop: v.stop, chain: []string{v.req.Key}, steps: v.steps}
	}
	return lineage{stop: v.stop, depth: v.up.depth + 1, chain: append(v.up.chain[:len(v.up.chain):len(v.up.chain)], v.req.Key), steps: v.steps}
}

// Invoke implements runner.Invoker: see the comment at the top of this file. It
// returns an error, and appends nothing, for a step name or key that cannot be
// one and a body the log cannot carry; a step cut short because the worker is
// stopping gets no receipt and returns the stop's error. An arguments object
// (in.Args) travels on the step's request as a caller's does.
func (v *invoker) Invoke(ctx context.Context, name, key string, in runner.Input) (runner.Step, error) {
	s := v.s
	if err := checkStep(name, key); err != nil {
		return runner.Step{}, err
	}
	if err := ctx.Err(); err != nil {
		return runner.Step{}, err
	}
	if enc := jsonLen(in.Body) + len(in.Args); enc > s.receiptBudget {
		return runner.Step{}, fmt.Errorf("%w: the body of step %s is %d bytes once JSON-encoded; the log takes %d in one event", ErrPayloadTooLarge, name, enc, s.receiptBudget)
	}
	lin := v.lineage()
	req := wire.InvocationRequest{
		InvocationID: StepInvocationID(v.req.InvocationID, name), Trace: v.req.Trace, Key: key, Body: in.Body, Args: in.Args,
		Credential: v.req.Credential, Token: v.req.Token,
		Parent: v.req.InvocationID, Depth: lin.depth + 1, Chain: strings.Join(lin.chain, ">"),
	}
	if st, done, err := s.doneStep(ctx, &req); done || err != nil {
		return st, err
	}
	ctx, sp := traceStep(ctx, name, &req)
	defer sp.End()
	// keyed: see receiptIDs.step
	ev, err := wire.NewEventWithID(s.waiters.ids.step(req.InvocationID), s.cfg.Clock(), wire.TypeInvocationRequested, req.Credential, &req)
	if err != nil {
		return runner.Step{}, err
	}
	f, err := s.cfg.Log.AppendAsync(wire.StepSubject(key), ev)
	if err != nil {
		return runner.Step{}, err
	}
	ack := &pendingAppend{f: f}
	d := newDraft(&req, v.d.Actor, s.cfg.Name, s.cfg.Clock())
	d.Parent = req.Parent
	d.TraceID = tracing.TraceID(ctx)
	if refusal := lin.guard(key, s.cfg.MaxDepth, s.cfg.MaxTreeSteps); refusal != nil {
		d.refuse(wire.StatusFailedBeforeRun, refusal.Literal, nil)
	} else {
		in, err := s.stepInput(ctx, v.stop, &req, ack)
		if err != nil {
			return runner.Step{}, err
		}
		in.Owner = v.owner
		s.run(ctx, &req, d, &in, &lin)
	}
	return s.finishStep(v.stop, d, ack)
}

// pendingAppend is an async append awaited by more than one reader: a future's
// acknowledgement can be received only once.
type pendingAppend struct {
	f    *eventlog.Pending
	done bool
	seq  uint64
	err  error
}

// await waits for the acknowledgement, or its failure, once, and returns the
// sequence; later calls return the same. Only the step's goroutine calls it.
func (p *pendingAppend) await(stop context.Context, invocationID string) (uint64, error) {
	if !p.done {
		p.seq, p.err = eventlog.AwaitAckWithin(stop, p.f, receiptAckWait)
		p.done = true
		if p.err != nil {
			p.err = fmt.Errorf("dispatcher: step %s: request not appended: %w", invocationID, p.err)
		}
	}
	return p.seq, p.err
}

// checkStep refuses a step name that is not 1 to 256 characters of A-Z a-z 0-9
// _ - and '.', and a key no row can have.
func checkStep(name, key string) error {
	if name == "" || len(name) > maxStepNameLen || strings.Trim(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.") != "" {
		return fmt.Errorf("%w: %.64q", ErrStepName, name)
	}
	if !wire.ValidKey(key) {
		return fmt.Errorf("%w: %.64q", ErrStepKey, key)
	}
	return nil
}

// doneStep looks for req's receipt: a redelivered parent finds there the steps
// that completed before, and reuses their results. A receipt for another key or
// body, or one whose result was cut, is an error: the step is neither reused
// nor run again.
//
// A receipt not yet folded is looked for once the projection has folded what
// the log holds now: a call under the step's id (a bus client's, which chose
// it) may have been receipted a moment ago, its batch not yet committed. That
// costs a commit only when a request under the id is in the log: once the
// follower has read what the log holds, none there means none ran
// (InvocationNow), and the step runs without waiting for the batch to commit.
func (s *Service) doneStep(ctx context.Context, req *wire.InvocationRequest) (runner.Step, bool, error) {
	rc, _, err := s.cfg.Projector.Receipt(req.InvocationID)
	if errors.Is(err, projector.ErrNotFound) {
		sctx, cancel := s.cfg.Projector.WaitContext(ctx)
		if _, known, ierr := s.cfg.Projector.InvocationNow(sctx, req.InvocationID); !known || !errors.Is(ierr, projector.ErrNotFound) {
			if serr := s.cfg.Projector.Settle(sctx, wire.DataStream); serr == nil {
				rc, _, err = s.cfg.Projector.Receipt(req.InvocationID)
			}
		}
		cancel()
	}
	switch {
	case errors.Is(err, projector.ErrNotFound):
		return runner.Step{}, false, nil
	case err != nil:
		return runner.Step{}, true, err
	case rc.Parent != req.Parent:
		// A call that is not this step took its id first: a bus client may choose
		// an invocation id of the form of its own flow's steps. Its receipt is not
		// this step's result.
		return runner.Step{}, true, fmt.Errorf("%w: %s is the invocation id of another call (parent %q, not %q)", ErrStepMismatch, req.InvocationID, rc.Parent, req.Parent)
	case rc.Key != req.Key || !s.sameStepInput(&rc, req):
		return runner.Step{}, true, fmt.Errorf("%w: %s ran as %s with another body", ErrStepMismatch, req.InvocationID, rc.Key)
	case rc.Extra["truncated"] == true:
		return runner.Step{}, true, fmt.Errorf("%w: %s", ErrStepTruncated, req.InvocationID)
	}
	return stepOf(&rc, rc.Result), true, nil
}

// sameStepInput reports whether rc, the receipt under req's step id, is of req's
// arguments. A receipt records the body as sent until the gate admits the call
// (InvocationRequest.Sent), and an admitted arguments object as its pipe form, which the key's
// row (its signature now) gives again.
func (s *Service) sameStepInput(rc *wire.Receipt, req *wire.InvocationRequest) bool {
	if rc.Fingerprints.Input == Fingerprint(req.Sent()) {
		return true
	}
	if len(req.Args) == 0 {
		return false
	}
	g := s.cfg.Projector.Gate(req.Key, "")
	if g.RowErr != nil || g.Signature == nil {
		return false
	}
	body, err := g.Signature.PipeOf(req.Args)
	return err == nil && rc.Fingerprints.Input == Fingerprint(body)
}

func stepOf(rc *wire.Receipt, result string) runner.Step {
	return runner.Step{InvocationID: rc.InvocationID, Status: rc.Status, Result: result, OK: rc.OK, CostUSD: rc.CostUSD}
}

// stepInput is what the gate reads for a step, as handle reads it for a request
// from the queue: the row (caught up with the log when this node has not folded
// it yet) and, for a row that can strike, its breaker once everything appended
// before the step's request is folded. Waits end with stop, not with ctx: a
// step a fan-out cancels still gets its receipt.
func (s *Service) stepInput(ctx, stop context.Context, req *wire.InvocationRequest, ack *pendingAppend) (gate.Input, error) {
	g := s.cfg.Projector.Gate(req.Key, "")
	if errors.Is(g.RowErr, projector.ErrNotFound) {
		g = s.catchUpRow(ctx, req, "", g)
	}
	in := gateInput(req, &g)
	in.Step = true
	if g.RowErr != nil {
		return in, nil
	}
	if gate.CanStrike(g.Row) {
		seq, err := ack.await(stop, req.InvocationID)
		if err != nil {
			return in, err
		}
		if seq > 1 && s.cfg.Projector.Applied(wire.DataStream) < seq-1 {
			wctx, cancel := s.cfg.Projector.WaitContext(stop)
			s.cfg.Projector.WaitFor(wctx, wire.DataStream, seq-1)
			cancel()
		}
		in.Breaker, in.BreakerErr = s.cfg.Projector.Breaker(req.Key)
	}
	return in, nil
}

// finishStep stores the step's receipt once its request is in the log, and
// returns the step: its result whole, as the runner gave it, even when the
// receipt stores it cut. A step cut short by stop gets no receipt.
func (s *Service) finishStep(stop context.Context, d *draft, ack *pendingAppend) (runner.Step, error) {
	if err := stop.Err(); err != nil {
		return runner.Step{}, err
	}
	if _, err := ack.await(stop, d.InvocationID); err != nil {
		return runner.Step{}, err
	}
	result := d.Result
	rc := d.finish(s.cfg.Clock(), s.cfg.ResultCap, s.receiptBudget)
	stored := rc.Result
	if err := s.storeReceipt(stop, &rc, "", false); err != nil {
		return runner.Step{}, err
	}
	if rc.Result != stored { // a failure receipt took its place
		result = rc.Result
	}
	s.cfg.Metrics.receipt(&rc)
	return stepOf(&rc, result), nil
}

// Tools implements runner.Invoker: the enabled, planner-visible rows of the
// categories (comma-separated; "*" for every category) that the caller may
// invoke (gate.Permits: a token's scope, pin and risk ceiling), in the order the
// categories are named and, within one, the directory's canonical order; at most
// MaxTools. The call's own key and its ancestors' are left out: invoking one
// would be refused as a cycle; so are sensitive rows for a caller other than the
// owner: a step to one is refused (approval_required:<KEY>, see gate's watcher).
func (v *invoker) Tools(ctx context.Context, categories string) ([]runner.Tool, error) {
	cats := splitCategories(categories)
	chain := v.lineage().chain
	enabled := 1
	var out []runner.Tool
	seen := map[string]bool{}
	for _, cat := range cats {
		for offset := 0; len(out) < MaxTools; offset += toolsPage {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			rows, total, err := v.s.cfg.Projector.List(projector.Filter{Category: cat, Enabled: &enabled}, offset, toolsPage)
			if err != nil {
				return nil, err
			}
			for i := range rows {
				r := &rows[i]
				if len(out) == MaxTools || seen[r.Key] || r.PlannerVisible != 1 || slices.Contains(chain, r.Key) || !gate.Permits(v.claims, r) ||
					r.Sensitive == 1 && !v.owner {
					continue
				}
				seen[r.Key] = true
				out = append(out, runner.ToolOf(r))
			}
			if len(rows) == 0 || offset+len(rows) >= total {
				break
			}
		}
	}
	return out, nil
}

// splitCategories reads a categories column: "" (every category) when any item
// is "*", else the non-blank items, trimmed.
func splitCategories(s string) []string {
	var out []string
	for _, c := range strings.Split(s, ",") {
		switch c = strings.TrimSpace(c); c {
		case "*":
			return []string{""}
		case "":
		default:
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// Row implements runner.Invoker: the row called key, when it is enabled and the
// caller may invoke it (gate.Permits); any other key is ErrNoRow alike.
func (v *invoker) Row(ctx context.Context, key string) (*contract.Row, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	row, _, err := v.s.cfg.Projector.Row(key)
	switch {
	case errors.Is(err, projector.ErrNotFound):
		return nil, ErrNoRow
	case err != nil:
		return nil, err
	case row.Enabled != 1 || !gate.Permits(v.claims, &row):
		return nil, ErrNoRow
	}
	return &row, nil
}

// boundChildren keeps the children list within maxChildrenBytes of JSON; those
// cut are counted in Extra["children_truncated"] (the whole list's length).
func (d *draft) boundChildren() {
	n := 2
	for i, id := range d.Children {
		if n += jsonLen(id) + 3; n > maxChildrenBytes {
			if d.Extra == nil {
				d.Extra = map[string]any{}
			}
			d.Extra["children_truncated"] = len(d.Children)
			d.Children = d.Children[:i]
			return
		}
	}
}
