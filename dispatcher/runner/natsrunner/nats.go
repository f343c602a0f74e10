package natsrunner

import (
	"context"
	"errors"
	"strings"

	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
)

// DefaultTimeout bounds one request-reply of the nats runner.
const DefaultTimeout = runner.DefaultTimeout

// Config configures the nats runner.
type Config struct {
	// Conn carries the requests; required. The runner does not own it.
	Conn *nats.Conn
	// Limits bound a call: Timeout one request-reply (DefaultTimeout when 0),
	// MaxResultBytes the reply (ERR:nats:result_too_large:<cap>),
	// MaxSubstitutionBytes the rendered request data.
	runner.Limits
}

func (c *Config) setDefaults() { c.Limits = c.Limits.WithDefaults(DefaultTimeout) }

// Validate reports every problem with c, joined.
func (c Config) Validate() error {
	var errs []error
	if c.Conn == nil {
		errs = append(errs, errors.New("natsrunner: Config.Conn is required"))
	}
	return errors.Join(append(errs, c.Limits.Validate("natsrunner"))...)
}

// Runner runs rows whose runner is "nats": a capability served by any program
// that answers NATS requests. target is the subject, used literally (it is not
// substituted, so arguments cannot redirect a call to another subject). The request
// data is the content's executable lines substituted in JSON mode, or the raw
// invocation body when content has none. The reply data is the result, as is.
//
// The subject must be one literal subject (wire.CheckTargetSubject): a target under
// $JS., $SYS., $KV., _INBOX., capdir. (or any first token starting with '$') is
// refused before any request, with ERR:nats:reserved_subject:<subject>, so a row can
// never drive JetStream's API or capdir's own log; a wildcard, an empty token or
// whitespace gets ERR:nats:bad_target:<reason>:<subject>.
//
// Failures: ERR:nats:no_responders:<subject>, ERR:nats:timeout:<subject>,
// ERR:nats:canceled:<reason>, ERR:nats:bad_target:empty_subject,
// ERR:nats:bad_target:<reason>:<subject>, ERR:nats:reserved_subject:<subject>,
// ERR:nats:request:<subject>:<message>, ERR:nats:result_too_large:<cap>,
// ERR:substitution_too_large:<limit>.
type Runner struct {
	cfg Config
}

// New validates cfg and returns the runner.
func New(cfg Config) (*Runner, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Runner{cfg: cfg}, nil
}

// Run implements Runner.
func (r *Runner) Run(ctx context.Context, c runner.Call) runner.Outcome {
	subject := strings.TrimSpace(c.Row.Target)
	// The write path refuses these targets too, but a row can reach a runner without
	// it: written before the rule, or appended to the log by another writer.
	var bad *wire.SubjectError
	if errors.As(wire.CheckTargetSubject(subject), &bad) {
		return runner.Failed(errTarget(bad))
	}
	data := c.Body
	if tmpl := runner.Template(c.Row.Content); tmpl != "" {
		var err error
		if data, err = runner.Substitute(tmpl, c.Arguments(), c.Vars, runner.ModeJSON, r.cfg.MaxSubstitutionBytes); err != nil {
			return runner.FailedWith(err)
		}
	}
	if c.Shape {
		return runner.Shaped(runner.RedactDeep(map[string]any{"shape": true, "subject": subject, "data": data}, nil).(map[string]any))
	}
	if err := ctx.Err(); err != nil {
		return runner.Failed(runner.Canceled(runner.RunnerNATS, err))
	}
	tctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	msg, err := r.cfg.Conn.RequestWithContext(tctx, subject, []byte(data))
	switch {
	case err == nil && int64(len(msg.Data)) > r.cfg.MaxResultBytes:
		o := runner.Failed(runner.ResultTooLarge(runner.RunnerNATS, r.cfg.MaxResultBytes))
		o.Ran = true
		return o
	case err == nil:
		return runner.Outcome{Result: string(msg.Data), Ran: true}
	case ctx.Err() != nil:
		return runner.Failed(runner.Canceled(runner.RunnerNATS, ctx.Err()))
	case errors.Is(err, nats.ErrNoResponders):
		return runner.Failed(errNoResponders(subject))
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return runner.Failed(errTimeout(subject))
	default:
		return runner.Failed(errRequest(subject, err.Error()))
	}
}
