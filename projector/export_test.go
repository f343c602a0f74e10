package projector

import "github.com/capdir/capdir/eventlog"

// SetBeforeCommit installs the in-transaction failpoint used by crash tests.
func SetBeforeCommit(c *Config, fn func(stream string, batch []eventlog.Stored) error) {
	c.beforeCommit = fn
}

// SetLingerFrom makes batches linger from n waiting events instead of two.
func SetLingerFrom(c *Config, n int) { c.lingerFrom = n }

// RevokedLeeway is how long past its exp a revocation stays in memory.
const RevokedLeeway = revokedLeeway
