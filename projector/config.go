package projector

import (
	"errors"
	"log/slog"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/eventlog"
)

// Config configures a Projector.
type Config struct {
	// Path is the bbolt file.
	Path string
	// Log is the event log to fold. Required for Run; queries work without it.
	Log *eventlog.Log
	// BatchSize bounds how many events one bbolt transaction applies (default 1024).
	BatchSize int
	// Sync fsyncs every batch commit (default off: see the package Caveats).
	Sync bool
	// Breaker is the breaker policy the fold applies to receipts.
	Breaker breaker.Config
	// Logger receives skipped events and rebuild notices; slog.Default when nil.
	Logger *slog.Logger

	// beforeCommit, when set, runs inside the batch transaction after the events
	// are applied and before the checkpoint commits. Returning an error abandons
	// the transaction (tests use it to simulate a crash).
	beforeCommit func(stream string, batch []eventlog.Stored) error
}

func (c *Config) setDefaults() {
	if c.BatchSize == 0 {
		c.BatchSize = 1024
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var errs []error
	if c.Path == "" {
		errs = append(errs, errors.New("projector: a bbolt path is required"))
	}
	if c.BatchSize < 1 {
		errs = append(errs, errors.New("projector: batch size must be at least 1"))
	}
	if err := c.Breaker.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
