package natsrunner

import (
	"errors"

	"github.com/capdir/capdir/dispatcher/runner"
)

// Sentinel errors of the nats runner; every "ERR:nats:..." literal is built below.
var (
	// ErrBadTarget: the nats row has no subject.
	ErrBadTarget = errors.New("nats: bad target")
	// ErrNoResponders: nobody subscribes to the subject.
	ErrNoResponders = errors.New("nats: no responders")
	// ErrTimeout: no reply within the configured timeout.
	ErrTimeout = errors.New("nats: timeout")
	// ErrRequest: any other request failure.
	ErrRequest = errors.New("nats: request failed")
)

func errBadTarget() *runner.Error {
	return runner.NewError(ErrBadTarget, "ERR:nats:bad_target:empty_subject")
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
