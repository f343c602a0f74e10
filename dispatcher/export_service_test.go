package dispatcher

import (
	"crypto/ecdsa"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// SetFailpoints installs the crash points used by redelivery tests.
func SetFailpoints(c *ServiceConfig, beforeReceipt, beforeAck func(*wire.InvocationRequest) error) {
	c.beforeReceipt, c.beforeAck = beforeReceipt, beforeAck
}

// SetBeforeReceiptAppend installs a hook run before each receipt append, with
// the event about to be appended.
func SetBeforeReceiptAppend(c *ServiceConfig, f func(rc *wire.Receipt, ev wire.Event)) {
	c.beforeReceiptAppend = f
}

// Answerers is how many of s's call answerers run now, and how many have
// started.
func Answerers(s *Service) (running int32, started int64) {
	return s.calls.answerers.Load(), s.calls.started.Load()
}

// SetAnswererIdle makes answerers started from now on wait d for their next
// call; it must be called while none runs. It returns what puts the default
// back.
func SetAnswererIdle(d time.Duration) (restore func()) {
	was := answererIdle
	answererIdle = d
	return func() { answererIdle = was }
}

// Draining is closed once Drain (or Stop) has begun.
func Draining(s *Service) <-chan struct{} { return s.draining }

// OpenTestProjection opens a projection of l in a temporary directory, logging
// nothing, for services under test; it is not run.
func OpenTestProjection(t testing.TB, l *eventlog.Log) *projector.Projector {
	t.Helper()
	p, err := projector.Open(projector.Config{Path: filepath.Join(t.TempDir(), "p.db"), Log: l,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// NewTestTokens is a minter and a verifier of a fresh signing key, for services
// under test.
func NewTestTokens(t testing.TB) (*token.Minter, *token.Verifier) {
	t.Helper()
	k, err := token.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	m, err := token.NewMinter(token.MinterConfig{Key: k, Audience: "capdir-test"})
	if err != nil {
		t.Fatal(err)
	}
	v, err := token.NewVerifier(token.VerifierConfig{Keys: []*ecdsa.PublicKey{k.Public()}, Audience: "capdir-test"})
	if err != nil {
		t.Fatal(err)
	}
	return m, v
}

// ElectionHeard reports whether s has heard of a leader election of the dispatch
// consumer.
func ElectionHeard(s *Service) bool { return s.elections.at.Load() != 0 }
