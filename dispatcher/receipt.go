package dispatcher

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
	"unicode/utf8"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// Fingerprint is the hex SHA-256 of s.
func Fingerprint(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// draft is a receipt under construction.
type draft struct {
	eventlog.Receipt
}

func newDraft(req *eventlog.InvocationRequest, actor, worker string, started time.Time) *draft {
	return &draft{Receipt: eventlog.Receipt{
		ReceiptSummary: eventlog.ReceiptSummary{
			InvocationID: req.InvocationID,
			Trace:        req.Trace,
			Actor:        actor,
			Key:          req.Key,
			StartedAt:    started.UTC(),
		},
		Body:        req.Body,
		Worker:      worker,
		BreakerKind: breaker.NotCounted.String(),
	}}
}

// row records the row the request runs against and its contract fingerprint.
func (d *draft) row(r *contract.Row, fingerprint string) {
	d.Type = r.Type
	d.Runner = r.EffectiveRunner()
	d.Fingerprints.Contract = fingerprint
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
	switch {
	case shape:
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
// output, then bounds what the receipt stores: the result to resultCap, and body and
// result together to budget bytes, so the receipt fits in one event. What was cut is
// marked, and Extra["truncated"] is set.
func (d *draft) finish(finished time.Time, resultCap, budget int) eventlog.Receipt {
	d.FinishedAt = finished.UTC()
	d.DurationMS = float64(d.FinishedAt.Sub(d.StartedAt).Microseconds()) / 1000
	d.Fingerprints.Input = Fingerprint(d.Body)
	d.Fingerprints.Output = Fingerprint(d.Result)
	d.HMAC = fingerprintHMAC(d.Body, d.Result)
	cut := false
	if resultCap > 0 && len(d.Result) > resultCap {
		d.Result, cut = truncate(d.Result, resultCap), true
	}
	if budget > 0 && len(d.Body)+len(d.Result) > budget {
		// Keep the smaller of the two whole when it fits in half the budget.
		bodyMax := max(budget/2, budget-len(d.Result))
		d.Body = truncate(d.Body, min(len(d.Body), bodyMax))
		d.Result = truncate(d.Result, budget-len(d.Body))
		cut = true
	}
	if cut {
		if d.Extra == nil {
			d.Extra = map[string]any{}
		}
		d.Extra["truncated"] = true
	}
	return d.Receipt
}

// truncMark ends a stored text that was cut.
const truncMark = "…[truncated]"

// truncate cuts s to at most n bytes (the mark included) on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n-len(truncMark), 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + truncMark
}
