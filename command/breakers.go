package command

import (
	"context"
	"errors"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// Breakers resets the auth breakers of rows, as the owner. Safe for concurrent
// use.
type Breakers struct {
	cfg Config
}

// Reset is the owner's reset of key's breaker: one BREAKER_RESET, answered once
// this node has folded it. DELETE /api/breaker/{key} and the console both reset
// here. Resetting a closed breaker (or the key of a row that never struck) is
// allowed and clears its strikes; a key with neither a row nor a breaker state is
// ErrNotFound, and nothing is appended. Errors: a contract error for a bad key,
// ErrNotFound (a *KeyError), ErrUnavailable, or ErrNotVisible.
func (b *Breakers) Reset(ctx context.Context, key string) error {
	if err := contract.ValidateKey(key); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.WriteTimeout)
	defer cancel()
	if known, err := b.known(ctx, key); err != nil {
		return NewError(ErrUnavailable, "breaker reset not written: %w", err)
	} else if !known {
		return WithKey(key, ErrNotFound)
	}
	seq, err := b.appendReset(ctx, key)
	if err != nil {
		return NewError(ErrUnavailable, "breaker reset not written: %w", err)
	}
	if err := b.cfg.Projector.WaitFor(ctx, wire.DataStream, seq); err != nil {
		return NewError(ErrNotVisible,
			"breaker reset written to the log (sequence %d of %s) but not yet projected (%v); it takes effect once the projector catches up",
			seq, wire.DataStream, err)
	}
	return nil
}

// breakerKnown reports whether key has a row or a breaker state. When this node's
// projection holds neither, it looks again once the projection has caught up with
// the log, so a row or a strike written through another node counts.
func (b *Breakers) known(ctx context.Context, key string) (bool, error) {
	for caughtUp := false; ; caughtUp = true {
		_, _, err := b.cfg.Projector.Row(key)
		if err == nil {
			return true, nil
		} else if !errors.Is(err, projector.ErrNotFound) {
			return false, err
		}
		if has, err := b.cfg.Projector.HasBreaker(key); err != nil || has {
			return has, err
		}
		if caughtUp {
			return false, nil
		}
		for _, stream := range wire.Streams {
			if err := b.cfg.Projector.Settle(ctx, stream); err != nil {
				return false, err
			}
		}
	}
}

// appendReset appends the owner's BREAKER_RESET of key and returns its
// sequence on the data stream.
func (b *Breakers) appendReset(ctx context.Context, key string) (uint64, error) {
	ev, err := b.cfg.Log.NewEvent(wire.TypeBreakerReset, wire.OwnerActor, eventlog.BreakerReset{Key: key})
	if err != nil {
		return 0, err
	}
	return b.cfg.Log.Append(ctx, wire.BreakerSubject(key), ev)
}
