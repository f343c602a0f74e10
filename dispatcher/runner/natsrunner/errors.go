package natsrunner

import (
	"errors"

	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog/wire"
)

// Sentinel errors of the nats runner; every "ERR:nats:..." literal is built below.
var (
	// ErrBadTarget: the nats row's target is not one literal subject (empty,
	// whitespace, a wildcard, an empty token).
	ErrBadTarget = errors.New("nats: bad target")
	// ErrReservedSubject: the nats row's target is NATS's own API ($JS., $SYS., ...),
	// another caller's inbox or capdir's log (wire.ReservedSubject).
	ErrReservedSubject = errors.New("nats: reserved subject")
	// ErrNoResponders: nobody subscribes to the subject.
	ErrNoResponders = errors.New("nats: no responders")
	// ErrTimeout: no reply within the configured timeout.
	ErrTimeout = errors.New("nats: timeout")
	// ErrRequest: any other request failure.
	ErrRequest = errors.New("nats: request failed")
)

// errTarget is the literal for a target wire.CheckTargetSubject refused:
// ERR:nats:reserved_subject:<subject>, ERR:nats:bad_target:empty_subject, or
// ERR:nats:bad_target:<reason>:<subject>.
func errTarget(err *wire.SubjectError) *runner.Error {
	switch err.Reason {
	case wire.SubjectReserved:
		return runner.NewError(ErrReservedSubject, "ERR:nats:reserved_subject:"+err.Subject)
	case wire.SubjectEmpty:
		return runner.NewError(ErrBadTarget, "ERR:nats:bad_target:empty_subject")
	}
	return runner.NewError(ErrBadTarget, "ERR:nats:bad_target:"+err.Reason+":"+err.Subject)
}

func errNoResponders(subject string) *runner.Error {
	return runner.NewError(ErrNoResponders, "ERR:nats:no_responders:"+subject)
}

func errTimeout(subject string) *runner.Error {
	return runner.NewError(ErrTimeout, "ERR:nats:timeout:"+subject)
}

func errRequest(subject, msg string) *runner.Error {
	return runner.NewError(ErrRequest, "ERR:nats:request:"+subject+":"+msg)
}
