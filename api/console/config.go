package console

import (
	"errors"
	"log/slog"
	"time"

	"github.com/capdir/capdir/api"
	"github.com/capdir/capdir/projector"
	"github.com/capdir/capdir/projector/ask"
)

// Config configures a Console. API, Projector and Ask are required; a zero
// field of the rest takes its default.
type Config struct {
	// API is the facade whose code paths every read goes through; every change
	// goes through its command side (API.Commands()).
	API *api.Server
	// Projector is read as the REST routes read it.
	Projector *projector.Projector
	// Ask is the index the directory's search ranks rows with.
	Ask *ask.Index
	// NodeName names the node on the health page.
	NodeName string
	// Workers, when set, is how many of the node's workers run a call now, and
	// how many it has (dispatcher.Service.Busy), for the health page.
	Workers func() (busy, workers int)
	// DataDir is the node's data dir, whose bus identities the health page lists
	// (none when empty).
	DataDir string
	// SessionIdle is how long a session lives after its last request
	// (DefaultSessionIdle).
	SessionIdle time.Duration
	// MaxSessions bounds the sessions held at once (DefaultMaxSessions); past it
	// the one idle longest ends.
	MaxSessions int
	// SecureCookie makes the session cookie Secure on every answer, not only on
	// one that went out over TLS: for a console reached through a TLS proxy
	// (the node's public URL is https), whose requests reach the node in plain
	// HTTP.
	SecureCookie bool
	Clock        func() time.Time
	Logger       *slog.Logger
}

// Defaults of Config.
const (
	DefaultSessionIdle = 12 * time.Hour
	DefaultMaxSessions = 1024
)

func (c *Config) setDefaults() {
	if c.SessionIdle == 0 {
		c.SessionIdle = DefaultSessionIdle
	}
	if c.MaxSessions == 0 {
		c.MaxSessions = DefaultMaxSessions
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
	if c.API == nil || c.Projector == nil || c.Ask == nil {
		errs = append(errs, errors.New("console: the API server, the projector and the ask index are required"))
	}
	if c.SessionIdle < 0 || c.MaxSessions < 0 {
		errs = append(errs, errors.New("console: SessionIdle and MaxSessions must not be negative"))
	}
	return errors.Join(errs...)
}
