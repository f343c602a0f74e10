package natsrunner

import (
	"errors"

	"github.com/capdir/capdir/contract/failure"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog/wire"
)

// Sentinel errors of the nats runner, the kinds of its failure table's entries.
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

// The nats runner's failures. Each literal is built from its entry, here and
// nowhere else.
var (
	failNoResponders = failure.Entry{
		Literal: "ERR:nats:no_responders:<subject>", Kind: ErrNoResponders, Fault: failure.FaultService, Doc: failure.DocEvery,
		Cause: "no service answers on the row's subject",
		Fix:   "start the service that serves this subject",
	}
	failTimeout = failure.Entry{
		Literal: "ERR:nats:timeout:<subject>", Kind: ErrTimeout, Fault: failure.FaultService, Doc: failure.DocEvery,
		Cause: "the service did not answer in time",
		Fix:   "check the service's health, then call again",
	}
	failReservedSubject = failure.Entry{
		Literal: "ERR:nats:reserved_subject:<subject>", Kind: ErrReservedSubject, Fault: failure.FaultRow, Doc: failure.DocEvery,
		Cause: "the target is a subject of NATS or of capdir",
		Fix:   "the owner sets a subject of its own",
	}
	failEmptySubject = failure.Entry{
		Literal: "ERR:nats:bad_target:empty_subject", Kind: ErrBadTarget, Fault: failure.FaultRow,
		Cause: "the target renders to no subject",
		Fix:   "the owner writes the subject in target",
	}
	failBadTarget = failure.Entry{
		Literal: "ERR:nats:bad_target:<reason>:<subject>", Kind: ErrBadTarget, Fault: failure.FaultRow,
		Cause: "the target is not one literal subject (whitespace, a wildcard, an empty token)",
		Fix:   "the owner writes one subject of tokens joined by dots, without * or >",
	}
	failRequest = failure.Entry{
		Literal: "ERR:nats:request:<subject>:<message>", Kind: ErrRequest, Fault: failure.FaultNode,
		Cause: "the request could not be sent or its reply read",
		Fix:   "check capdir's connection to NATS, then call again",
	}
)

// Failures is the nats runner's failure table.
var Failures = failure.Table{
	failNoResponders, failTimeout, failReservedSubject, failEmptySubject, failBadTarget,
	runner.SubstitutionTooLargeEntry, runner.CanceledEntry(runner.RunnerNATS),
	runner.ResultTooLargeEntry(runner.RunnerNATS), failRequest,
}

// Failures implements runner.Documented.
func (r *Runner) Failures() failure.Table { return Failures }

// errTarget is the literal for a target wire.CheckTargetSubject refused:
// ERR:nats:reserved_subject:<subject>, ERR:nats:bad_target:empty_subject, or
// ERR:nats:bad_target:<reason>:<subject>.
func errTarget(err *wire.SubjectError) *failure.Error {
	switch err.Reason {
	case wire.SubjectReserved:
		return failReservedSubject.New(err.Subject)
	case wire.SubjectEmpty:
		return failEmptySubject.New()
	}
	return failBadTarget.New(err.Reason, err.Subject)
}

func errNoResponders(subject string) *failure.Error { return failNoResponders.New(subject) }

func errTimeout(subject string) *failure.Error { return failTimeout.New(subject) }

func errRequest(subject, msg string) *failure.Error { return failRequest.New(subject, msg) }
