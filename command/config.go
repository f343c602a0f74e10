package command

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// Config configures the command side. Log and Projector are required, and Minter
// for Tokens; a zero field of the rest takes its default.
type Config struct {
	Log       *eventlog.Log
	Projector *projector.Projector
	// Minter mints the deployment's capability tokens.
	Minter *token.Minter
	// Check, when set, tells the failure every call of a row will have: a write
	// of such a row succeeds with a warning (the node passes its dispatcher).
	Check RowChecker
	// Approver, when set, carries out the owner's decisions on held calls;
	// without it every approval command is ErrNoDispatcher.
	Approver Approver
	// SecretEnv is the operator's allow-list of the environment variables a row's
	// auth column may name; a write naming any other is refused. The zero value
	// allows none.
	SecretEnv runner.SecretEnv
	// MaxRow caps one row, as sent and as the log stores it, together with the
	// log's MaxData (DefaultMaxRow).
	MaxRow int64
	// WriteTimeout bounds how long a write waits for its event to be projected
	// (DefaultWriteTimeout).
	WriteTimeout time.Duration
	// DecideWait bounds how long a decision waits for the approved call's
	// receipt (DefaultDecideWait).
	DecideWait time.Duration
	// ImportSpoolDir is where an import in the JSON array form is spooled while its
	// syntax is checked, before any row is written (os.TempDir() when empty). The
	// file is removed at once and vanishes when the import ends.
	ImportSpoolDir string
	// CheckUpstream, when set, checks an upstream registration's name, URL and
	// auth as the operator's --mcp-http values are checked (the facade passes
	// mcprunner.NewHTTP's check); FixedUpstream reports the names the operator's
	// flags own, which no registration may take.
	CheckUpstream func(name, rawURL, auth string) error
	FixedUpstream func(name string) bool
	Clock         func() time.Time
	Logger        *slog.Logger
}

// Defaults of Config.
const (
	DefaultMaxRow       = 4 << 20
	DefaultWriteTimeout = 10 * time.Second
	DefaultDecideWait   = 30 * time.Second
)

func (c *Config) setDefaults() {
	if c.MaxRow == 0 {
		c.MaxRow = DefaultMaxRow
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.DecideWait == 0 {
		c.DecideWait = DefaultDecideWait
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var errs []error
	if c.Log == nil {
		errs = append(errs, errors.New("command: a log is required"))
	}
	if c.Projector == nil {
		errs = append(errs, errors.New("command: a projector is required"))
	}
	if c.Minter == nil {
		errs = append(errs, errors.New("command: a token minter is required"))
	}
	if c.MaxRow < 0 || c.WriteTimeout < 0 || c.DecideWait < 0 {
		errs = append(errs, errors.New("command: MaxRow, WriteTimeout and DecideWait must not be negative"))
	}
	return errors.Join(errs...)
}

// RowChecker tells the failure every call of a row will have (see
// dispatcher.Service.CheckRow); with one the Directory warns of rows that cannot
// run as written.
type RowChecker interface {
	CheckRow(row *contract.Row) error
}

// Approver is what the approval commands need from the dispatch service: the
// owner's decisions on calls the watcher held, and the held call's body.
// Implementations must be safe for concurrent use.
type Approver interface {
	// LookupApproval is an invocation's approval (dispatcher.ErrApprovalUnknown
	// when there is none).
	LookupApproval(ctx context.Context, inv string) (projector.Approval, error)
	// DecideApproval records and carries out the owner's decision, approve or
	// deny: see dispatcher.Service.DecideApproval.
	DecideApproval(ctx context.Context, inv, decision, by string) (wire.Receipt, error)
	// ApprovalBody is the held call's body, read back from the log.
	ApprovalBody(ctx context.Context, a *projector.Approval) (string, error)
}
