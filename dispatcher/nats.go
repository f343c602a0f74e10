package dispatcher

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// DefaultNATSTimeout bounds one request-reply of the nats runner.
const DefaultNATSTimeout = 30 * time.Second

// NATSConfig configures the nats runner.
type NATSConfig struct {
	// Conn carries the requests; required. The runner does not own it.
	Conn *nats.Conn
	// Timeout bounds one request-reply; DefaultNATSTimeout when 0.
	Timeout time.Duration
}

func (c *NATSConfig) setDefaults() {
	if c.Timeout == 0 {
		c.Timeout = DefaultNATSTimeout
	}
}

// Validate reports every problem with c, joined.
func (c NATSConfig) Validate() error {
	var errs []error
	if c.Conn == nil {
		errs = append(errs, errors.New("dispatcher: NATSConfig.Conn is required"))
	}
	if c.Timeout < 0 {
		errs = append(errs, errors.New("dispatcher: NATSConfig.Timeout must not be negative"))
	}
	return errors.Join(errs...)
}

// NATSRunner runs rows whose runner is "nats": a capability served by any program
// that answers NATS requests. target is the subject, used literally (it is not
// substituted, so arguments cannot redirect a call to another subject). The request
// data is the content's executable lines substituted in JSON mode, or the raw
// invocation body when content has none. The reply data is the result, as is.
//
// Failures: ERR:nats:no_responders:<subject>, ERR:nats:timeout:<subject>,
// ERR:nats:canceled:<reason>, ERR:nats:bad_target:empty_subject,
// ERR:nats:request:<subject>:<message>.
type NATSRunner struct {
	cfg NATSConfig
}

// NewNATSRunner validates cfg and returns the runner.
func NewNATSRunner(cfg NATSConfig) (*NATSRunner, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &NATSRunner{cfg: cfg}, nil
}

// Run implements Runner.
func (r *NATSRunner) Run(ctx context.Context, c Call) Outcome {
	subject := strings.TrimSpace(c.Row.Target)
	if subject == "" {
		return failed(errNATSBadTarget())
	}
	data := c.Body
	if tmpl := template(c.Row.Content); tmpl != "" {
		data = Substitute(tmpl, c.args(), c.Vars, ModeJSON)
	}
	if c.Shape {
		return shaped(RedactDeep(map[string]any{"shape": true, "subject": subject, "data": data}, nil).(map[string]any))
	}
	if err := ctx.Err(); err != nil {
		return failed(errCanceled(RunnerNATS, err))
	}
	tctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	msg, err := r.cfg.Conn.RequestWithContext(tctx, subject, []byte(data))
	switch {
	case err == nil:
		return Outcome{Result: string(msg.Data), Ran: true}
	case ctx.Err() != nil:
		return failed(errCanceled(RunnerNATS, ctx.Err()))
	case errors.Is(err, nats.ErrNoResponders):
		return failed(errNATSNoResponders(subject))
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return failed(errNATSTimeout(subject))
	default:
		return failed(errNATSRequest(subject, err.Error()))
	}
}
