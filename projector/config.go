package projector

import (
	"errors"
	"log/slog"
	"time"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/eventlog"
)

// DefaultLinger is Settings.Linger's default. Nobody waits for it: a dispatch is
// answered when its receipt is appended, and a read that must see the latest
// events settles, which cuts the linger short. Only batches under load linger;
// there it turns a bbolt commit per event or two into one per hundred or so.
const DefaultLinger = 10 * time.Millisecond

// DefaultWait is Settings.Wait's default.
const DefaultWait = 5 * time.Second

// Settings are what an operator sets of a Projector, apart from the handles and
// wiring of Config. A zero field takes its default.
type Settings struct {
	// BatchSize bounds how many events one bbolt transaction applies (default 1024).
	BatchSize int
	// Linger is how long a data-stream batch that is not full waits for more events
	// before it commits: DefaultLinger when 0, none (commit what has arrived at
	// once) when negative, at most 1s. Under load a commit per few milliseconds
	// costs far less than a commit per event; a WaitFor on the data stream cuts the
	// wait short, so nobody waiting on the projection pays it. Only a batch that
	// found two or more events waiting lingers: under light load each event commits
	// as it comes. The directory stream never lingers: every directory write waits
	// for its fold.
	Linger time.Duration
	// Sync fsyncs every batch commit (default off: see the package Caveats).
	Sync bool
	// LogCheck is how often Run checks that the log still holds what the projection
	// has applied (DefaultLogCheck when 0). JetStream's stream advisories trigger a
	// check at once; this interval catches a change whose advisory was missed.
	LogCheck time.Duration
	// Wait bounds how long a reader waits for this projection to fold what the log
	// holds before it reads what the projection has (DefaultWait when 0): a worker
	// reading the row a request names or the breaker it checks, a read after a
	// dispatch looking for the receipt, an approval looked up. See WaitContext.
	Wait time.Duration
}

func (c *Settings) setDefaults() {
	if c.BatchSize == 0 {
		c.BatchSize = 1024
	}
	if c.Linger == 0 {
		c.Linger = DefaultLinger // a negative one stays: FollowBatches lingers only when positive
	}
	if c.LogCheck == 0 {
		c.LogCheck = DefaultLogCheck
	}
	if c.Wait == 0 {
		c.Wait = DefaultWait
	}
}

// Validate reports every problem with c, its defaults applied, at once.
func (c Settings) Validate() error {
	c.setDefaults()
	var errs []error
	if c.BatchSize < 1 {
		errs = append(errs, errors.New("projector: batch size must be at least 1"))
	}
	if c.Linger > time.Second {
		errs = append(errs, errors.New("projector: linger must be at most 1s (--projection-linger)"))
	}
	if c.LogCheck < 0 {
		errs = append(errs, errors.New("projector: the log check interval must not be negative"))
	}
	if c.Wait < 0 {
		errs = append(errs, errors.New("projector: the projection wait must not be negative (0 takes the default, 5s)"))
	}
	return errors.Join(errs...)
}

// Config configures a Projector.
type Config struct {
	// Path is the bbolt file.
	Path string
	// Log is the event log to fold. Required for Run; queries work without it.
	Log *eventlog.Log
	// Settings are the fold's own bounds and timings.
	Settings
	// Breaker is the breaker policy the fold applies to receipts.
	Breaker breaker.Config
	// Logger receives skipped events and rebuild notices; slog.Default when nil.
	Logger *slog.Logger
	// Metrics measures the batches folded (see NewMetrics); a private, unregistered
	// set when nil.
	Metrics *Metrics
	// Clock tells when a revoked token has expired, so its revocation need no longer
	// be held in memory (see Revoked); time.Now when nil. Give it the clock the
	// dispatcher's gate uses.
	Clock func() time.Time

	// beforeCommit, when set, runs inside the batch transaction after the events
	// are applied and before the checkpoint commits. Returning an error abandons
	// the transaction (tests use it to simulate a crash).
	beforeCommit func(stream string, batch []eventlog.Stored) error
	// lingerFrom overrides how many waiting events make a batch linger (tests).
	lingerFrom int
	// snapEvery and snapFullEvery override the kept snapshots' intervals
	// (snapshots.go), so tests cross many of them with few events.
	snapEvery, snapFullEvery int
	// rebuild is set by Rebuild: the projection is a new file nobody reads until
	// the catch-up is complete, so the fold holds back its by-key index
	// (bykey_later.go) and the catch-up writes the file out as it goes.
	rebuild bool
	// byKeyLimit overrides how many by-key entries a rebuild holds (tests).
	byKeyLimit int
}

func (c *Config) setDefaults() {
	c.Settings.setDefaults()
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics, _ = NewMetrics(nil) // registers nothing, so it cannot fail
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var errs []error
	if c.Path == "" {
		errs = append(errs, errors.New("projector: a bbolt path is required"))
	}
	if err := c.Settings.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Breaker.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
