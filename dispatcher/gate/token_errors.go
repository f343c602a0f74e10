package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog/wire"
)

// The literal refusals of the token checks. Each text is produced here and nowhere
// else (token:… texts by token.Reason).

func refuseToken(err error) *Refusal {
	return &Refusal{Error: failure.Error{Literal: token.Reason(err), Cause: err}, Status: wire.StatusRefusedToken}
}

// refuseRevocationUnknown: ERR:revocation:<err>, like an unreadable row or breaker.
func refuseRevocationUnknown(err error) *Refusal {
	return refuse(wire.StatusFailedBeforeRun, failRevocationUnknown, err.Error())
}

func refuseScope(key string) *Refusal {
	return refuse(wire.StatusRefusedScope, failScope, key)
}

func refuseContractChanged(pinned, current string) *Refusal {
	return refuse(wire.StatusRefusedContractChanged, failContractChanged, pinned, current)
}

// refuseRiskCeiling: risk_ceiling:low<row:high.
func refuseRiskCeiling(ceiling, row string) *Refusal {
	return refuse(wire.StatusRefusedScope, failRiskCeiling, ceiling, row)
}

// refuseBodyFixed: body_fixed:<fixed>!=<sent>, each the first 16 hex digits of the
// body's SHA-256, so the refusal neither repeats a body nor grows with one.
func refuseBodyFixed(fixed, sent string) *Refusal {
	r := refuse(wire.StatusRefusedScope, failBodyFixed, shortSum(fixed), shortSum(sent))
	r.quotesInput = true
	return r
}

func refuseTokenPayload(size, ceiling int) *Refusal {
	r := refuse(wire.StatusRefusedPayloadTooLarge, failTokenPayload, strconv.Itoa(size), strconv.Itoa(ceiling))
	r.quotesInput = true
	return r
}

func shortSum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}
