package breaker

import (
	"errors"
	"fmt"
	"time"
)

// Defaults, as documented: 8 consecutive auth failures, cleared after 1 hour; the
// row opens for everyone when 3 callers other than the owner are refused at once.
const (
	DefaultThreshold = 8
	DefaultCooldown  = time.Hour
	DefaultQuorum    = 3
)

// Config is the breaker's policy. The zero Config is the default policy; every method
// treats a zero (or invalid) field as its default, so a Config need not be validated
// to be safe, only to be honest.
type Config struct {
	// Threshold is the number of consecutive auth failures that opens the breaker.
	Threshold int
	// Cooldown is how long the breaker stays open once tripped, and how long a
	// caller whose own run tripped is refused.
	Cooldown time.Duration
	// Quorum is how many callers other than the owner, each refused by its own
	// run, open the row for everyone.
	Quorum int
}

// setDefaults fills zero fields with their defaults.
func (c *Config) setDefaults() {
	if c.Threshold == 0 {
		c.Threshold = DefaultThreshold
	}
	if c.Cooldown == 0 {
		c.Cooldown = DefaultCooldown
	}
	if c.Quorum == 0 {
		c.Quorum = DefaultQuorum
	}
}

// Validate reports every problem with c, joined with errors.Join; each matches
// ErrInvalidConfig. Zero fields are valid: they mean the default.
func (c Config) Validate() error {
	c.setDefaults()
	var errs []error
	if c.Threshold < 1 {
		errs = append(errs, fmt.Errorf("%w: threshold %d must be at least 1", ErrInvalidConfig, c.Threshold))
	}
	if c.Cooldown < 0 {
		errs = append(errs, fmt.Errorf("%w: cooldown %s must not be negative", ErrInvalidConfig, c.Cooldown))
	}
	if c.Quorum < 1 {
		errs = append(errs, fmt.Errorf("%w: quorum %d must be at least 1", ErrInvalidConfig, c.Quorum))
	}
	return errors.Join(errs...)
}

// effective is c with defaults in place of zero or invalid values.
func (c Config) effective() Config {
	c.setDefaults()
	if c.Threshold < 1 {
		c.Threshold = DefaultThreshold
	}
	if c.Cooldown < 0 {
		c.Cooldown = DefaultCooldown
	}
	if c.Quorum < 1 {
		c.Quorum = DefaultQuorum
	}
	return c
}
