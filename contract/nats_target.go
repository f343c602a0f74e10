package contract

import (
	"strings"

	"github.com/capdir/capdir/eventlog/wire"
)

// RunnerNATS is the runner column's value for a row served over NATS request-reply:
// its target is the subject.
const RunnerNATS = "nats"

// validateNATSTarget checks the target of a row whose effective runner is nats: one
// literal subject (wire.CheckTargetSubject), never NATS's own API ($JS., $SYS., ...),
// another caller's inbox or capdir's log. An empty target is left to the runner,
// as for http rows.
func validateNATSTarget(r *Row) error {
	subject := strings.TrimSpace(r.Target)
	if r.EffectiveRunner() != RunnerNATS || subject == "" {
		return nil
	}
	if err := wire.CheckTargetSubject(subject); err != nil {
		return fieldErr(ErrInvalid, "target",
			`must be one literal NATS subject of your own for a nats row, e.g. "svc.geo.distance": %v`, err)
	}
	return nil
}
