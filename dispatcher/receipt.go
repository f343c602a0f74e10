package dispatcher

import (
	"math"
	"time"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog/wire"
)

// Fingerprint is the hex SHA-256 of s (wire.Fingerprint).
func Fingerprint(s string) string { return wire.Fingerprint(s) }

// draft is a receipt under construction.
type draft struct {
	wire.Receipt
	// pending: the gate held the call for the owner's approval (approval.go).
	pending bool
}

func newDraft(req *wire.InvocationRequest, actor, worker string, started time.Time) *draft {
	return &draft{Receipt: wire.Receipt{
		ReceiptSummary: wire.ReceiptSummary{
			InvocationID: req.InvocationID,
			Trace:        req.Trace,
			Actor:        actor,
			Key:          req.Key,
			StartedAt:    started.UTC(),
		},
		Body:        req.Sent(), // as the receipt records it until the gate admits the call
		Worker:      worker,
		BreakerKind: breaker.NotCounted.String(),
	}}
}

// row records the row the request runs against, its contract fingerprint and
// the control-stream sequence that wrote it.
func (d *draft) row(r *contract.Row, fingerprint string, seq uint64) {
	d.Type = r.Type
	d.Runner = r.EffectiveRunner()
	d.Fingerprints.Contract = fingerprint
	d.ContractSeq = seq
}

// refuse completes d as a refusal: nothing ran.
func (d *draft) refuse(status, result string, extra map[string]any) {
	d.Status = status
	d.Result = result
	d.Extra = extra
}

// outcome completes d from a runner's Outcome.
func (d *draft) outcome(o runner.Outcome, shape bool) {
	d.Result = o.Result
	d.Ran = o.Ran
	d.OK = o.OK()
	d.Upstream = o.Upstream
	d.CostUSD = o.CostUSD
	d.CredTag = o.CredTag
	d.Children = o.Children
	d.PromptTokens, d.CompletionTokens = o.PromptTokens, o.CompletionTokens
	switch {
	case shape && d.OK:
		d.Status = wire.StatusShapeOnly
		d.Ran = false
		d.Extra = map[string]any{"shape": o.Shape}
	case d.OK && d.Ran:
		d.Status = wire.StatusProvenMaterialResult
		d.Material = true
	case d.Ran:
		d.Status = wire.StatusRanWithError
	default:
		d.Status = wire.StatusFailedBeforeRun
	}
	if !shape {
		d.BreakerKind = breaker.Classify(o.Upstream, o.Ran).String()
	}
}

// finish stamps times and computes the fingerprints over the whole input and
// output, then bounds what the receipt stores, counted as the event will carry it
// (JSON-encoded, see jsonLen): the result to resultCap bytes, and body and result
// together to budget bytes, so the receipt fits in one event. What was cut is
// marked, and Extra["truncated"] is set.
func (d *draft) finish(finished time.Time, resultCap, budget int) wire.Receipt {
	d.FinishedAt = finished.UTC()
	d.DurationMS = float64(d.FinishedAt.Sub(d.StartedAt).Microseconds()) / 1000
	var fp receiptFingerprints
	fp.compute(d.Body, d.Result)
	d.Fingerprints.Input, d.Fingerprints.Output, d.HMAC = fp.Input, fp.Output, fp.HMAC
	d.boundChildren()
	bodyLen, resultLen := jsonLen(d.Body), jsonLen(d.Result)
	cut := false
	if resultCap > 0 && resultLen > resultCap {
		d.Result, resultLen = truncate(d.Result, resultCap)
		cut = true
	}
	if budget > 0 && bodyLen+resultLen > budget {
		// Keep the smaller of the two whole when it fits in half the budget.
		bodyMax := max(budget/2, budget-resultLen)
		d.Body, bodyLen = truncate(d.Body, min(bodyLen, bodyMax))
		d.Result, _ = truncate(d.Result, budget-bodyLen)
		cut = true
	}
	if cut {
		d.markTruncated()
	}
	return d.Receipt
}

func (d *draft) markTruncated() {
	if d.Extra == nil {
		d.Extra = map[string]any{}
	}
	d.Extra["truncated"] = true
}

// failureBodyMax bounds the body a failure receipt keeps (JSON-encoded bytes).
const failureBodyMax = 1 << 10

// failureReceipt is the small receipt stored in place of rc when the log refused
// rc for good (err, see appendFailure; size is the length of rc's data). It keeps
// what the call was and how it touched the breaker: ids, row, timings, the
// fingerprints of the whole input and output (plain and keyed), the upstream status, the credential
// tag; the result is the literal of receiptFailure, the body is cut short, and
// nothing else the runner returned is kept. A call whose target ran is
// RAN_WITH_ERROR, any other FAILED_BEFORE_RUN.
func failureReceipt(rc *wire.Receipt, err error, size int) wire.Receipt {
	f := wire.Receipt{
		ReceiptSummary:    rc.ReceiptSummary,
		Result:            receiptFailure(err, size).Literal,
		HMAC:              rc.HMAC,
		CredTag:           rc.CredTag,
		Parent:            rc.Parent,
		Children:          rc.Children,
		PromptTokens:      rc.PromptTokens,
		CompletionTokens:  rc.CompletionTokens,
		BreakerGeneration: rc.BreakerGeneration,
		BreakerKind:       rc.BreakerKind,
		Worker:            rc.Worker,
		TraceID:           rc.TraceID,
		Extra:             map[string]any{"truncated": true},
	}
	f.Body, _ = truncate(rc.Body, failureBodyMax)
	f.OK, f.Material = false, false
	f.Status = wire.StatusFailedBeforeRun
	if f.Ran {
		f.Status = wire.StatusRanWithError
	}
	if math.IsNaN(f.CostUSD) || math.IsInf(f.CostUSD, 0) {
		f.CostUSD = 0 // encoding/json refuses both
	}
	return f
}
