package runner

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultTimeout bounds one call of a runner that talks to an upstream (http,
// nats) when its Limits leave Timeout at 0.
const DefaultTimeout = 30 * time.Second

// Limits are the bounds a runner applies to one call; every runner's Config
// holds them. A zero field takes its default (see WithDefaults); a negative one
// is refused by Validate.
type Limits struct {
	// Timeout bounds one call (one model request, for the agent runner): the
	// runner's default when 0 (DefaultTimeout for http and nats, none for fn and
	// flow, which the dispatcher's run timeout bounds). A call that takes longer
	// fails with the runner's timeout literal, or ERR:<runner>:canceled:<reason>.
	Timeout time.Duration
	// MaxResultBytes caps the result (for http, the upstream body);
	// DefaultMaxResultBytes when 0. A larger one fails the call with
	// ERR:<runner>:result_too_large:<cap> (http: response_too_large), never cut.
	MaxResultBytes int64
	// MaxSubstitutionBytes bounds each text the runner substitutes;
	// DefaultMaxSubstitutionBytes when 0. A larger one fails the call with
	// ERR:substitution_too_large:<limit> before anything is sent. The agent
	// runner substitutes nothing.
	MaxSubstitutionBytes int
}

// WithDefaults is l with each zero field at its default: timeout (the runner's
// own; 0 for none) for Timeout, DefaultMaxResultBytes and
// DefaultMaxSubstitutionBytes.
func (l Limits) WithDefaults(timeout time.Duration) Limits {
	if l.Timeout == 0 {
		l.Timeout = timeout
	}
	if l.MaxResultBytes == 0 {
		l.MaxResultBytes = DefaultMaxResultBytes
	}
	if l.MaxSubstitutionBytes == 0 {
		l.MaxSubstitutionBytes = DefaultMaxSubstitutionBytes
	}
	return l
}

// Validate reports every negative limit, joined, each as
// "<pkg>: Config.<Field> must not be negative".
func (l Limits) Validate(pkg string) error {
	var errs []error
	for _, f := range []struct {
		name     string
		negative bool
	}{{"Timeout", l.Timeout < 0}, {"MaxResultBytes", l.MaxResultBytes < 0}, {"MaxSubstitutionBytes", l.MaxSubstitutionBytes < 0}} {
		if f.negative {
			errs = append(errs, fmt.Errorf("%s: Config.%s must not be negative", pkg, f.name))
		}
	}
	return errors.Join(errs...)
}

// Bound is ctx bounded by l.Timeout when it is positive, and ctx itself (with a
// cancel that does nothing) otherwise: a call with no timeout of its own costs no
// context.
func (l Limits) Bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if l.Timeout > 0 {
		return context.WithTimeout(ctx, l.Timeout)
	}
	return ctx, noCancel
}

func noCancel() {}
