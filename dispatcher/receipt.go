package dispatcher

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
)

// Receipt statuses.
const (
	// StatusProvenMaterialResult: the target ran and returned a non-error result.
	StatusProvenMaterialResult = "PROVEN_MATERIAL_RESULT"
	// StatusRanWithError: the target was reached and the result is an ERR: string
	// (for example an upstream 401).
	StatusRanWithError = "RAN_WITH_ERROR"
	// StatusFailedBeforeRun: the runner failed before reaching its target (bad
	// template, unknown function, unreachable host, bad auth spec, timeout).
	StatusFailedBeforeRun = "FAILED_BEFORE_RUN"
	// StatusShapeOnly: shape mode; the request was built and not sent.
	StatusShapeOnly = "SHAPE_ONLY"
	// StatusRefusedUnknownKey: no row has the key.
	StatusRefusedUnknownKey = "REFUSED_UNKNOWN_KEY"
	// StatusRefusedBreakerOpen: the row's auth breaker is open.
	StatusRefusedBreakerOpen = "REFUSED_BREAKER_OPEN"
	// StatusRefusedDisabled: the row has enabled = 0.
	StatusRefusedDisabled = "REFUSED_DISABLED"
	// StatusRefusedPayloadTooLarge: the body is over the payload ceiling.
	StatusRefusedPayloadTooLarge = "REFUSED_PAYLOAD_TOO_LARGE"
	// StatusRefusedBadRequest: the request event itself was unusable.
	StatusRefusedBadRequest = "REFUSED_BAD_REQUEST"
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

func (d *draft) row(r *contract.Row) {
	d.Type = r.Type
	d.Runner = r.EffectiveRunner()
	d.Fingerprints.Contract = contract.Fingerprint(r)
}

// refuse completes d as a refusal: nothing ran.
func (d *draft) refuse(status, result string, extra map[string]any) {
	d.Status = status
	d.Result = result
	d.Extra = extra
}

// outcome completes d from a runner's Outcome.
func (d *draft) outcome(o Outcome, shape bool) {
	d.Result = o.Result
	d.Ran = o.Ran
	d.OK = o.OK()
	d.Upstream = o.Upstream
	d.CostUSD = o.CostUSD
	d.CredTag = o.CredTag
	switch {
	case shape:
		d.Status = StatusShapeOnly
		d.Ran = false
		d.Extra = map[string]any{"shape": o.Shape}
	case d.OK && d.Ran:
		d.Status = StatusProvenMaterialResult
		d.Material = true
	case d.Ran:
		d.Status = StatusRanWithError
	default:
		d.Status = StatusFailedBeforeRun
	}
	if !shape {
		d.BreakerKind = breaker.Classify(o.Upstream, o.Ran).String()
	}
}

// finish stamps times, caps the stored result and computes the fingerprints.
func (d *draft) finish(finished time.Time, resultCap int) eventlog.Receipt {
	d.FinishedAt = finished.UTC()
	d.DurationMS = float64(d.FinishedAt.Sub(d.StartedAt).Microseconds()) / 1000
	d.Fingerprints.Input = Fingerprint(d.Body)
	d.Fingerprints.Output = Fingerprint(d.Result)
	if resultCap > 0 && len(d.Result) > resultCap {
		d.Result = d.Result[:resultCap] + "…[truncated]"
	}
	return d.Receipt
}
