package gate

import (
	"encoding/json"
	"fmt"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/eventlog/wire"
)

// Refusal is a request the gate turned away: the receipt's status, the literal
// reason that is the receipt's result, and any structured detail for its extra.
type Refusal struct {
	Status string
	Reason string
	Extra  map[string]any
}

// The literal refusals. Each text is produced here and nowhere else.

func refusePayload(size, ceiling int) *Refusal {
	return &Refusal{Status: wire.StatusRefusedPayloadTooLarge, Reason: fmt.Sprintf("ERR:payload_too_large:%d>%d", size, ceiling)}
}

// UnknownKey is the refusal body for a key no row has:
// {"error":"unknown_key","attempted":…,"ran":false,"did_you_mean":[…]}.
func UnknownKey(attempted string, didYouMean []string) map[string]any {
	if didYouMean == nil {
		didYouMean = []string{}
	}
	return map[string]any{"error": "unknown_key", "attempted": attempted, "ran": false, "did_you_mean": didYouMean}
}

func refuseUnknownKey(key string, didYouMean []string) *Refusal {
	body := UnknownKey(key, didYouMean)
	b, _ := json.Marshal(body) // plain strings and a bool
	return &Refusal{Status: wire.StatusRefusedUnknownKey, Reason: string(b), Extra: body}
}

func refuseDirectory(err error) *Refusal {
	return &Refusal{Status: wire.StatusFailedBeforeRun, Reason: "ERR:directory:" + err.Error()}
}

func refuseDisabled(key string) *Refusal {
	return &Refusal{Status: wire.StatusRefusedDisabled, Reason: "ERR:disabled:" + key}
}

func refuseBreakerUnreadable(err error) *Refusal {
	return &Refusal{Status: wire.StatusFailedBeforeRun, Reason: "ERR:breaker:" + err.Error()}
}

func refuseBreakerOpen(key string, threshold int, d breaker.Decision) *Refusal {
	return &Refusal{Status: wire.StatusRefusedBreakerOpen, Reason: breaker.Message(key, threshold), Extra: map[string]any{
		"opened_at": d.OpenedAt, "closes_at": d.ClosesAt,
	}}
}
