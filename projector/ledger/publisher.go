package ledger

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/capdir/capdir/projector"
	"golang.org/x/mod/sumdb/note"
)

// Signed is a checkpoint with its signed note.
type Signed struct {
	Checkpoint
	Note []byte
}

// Publisher signs checkpoints of a node's ledger and keeps the latest, in memory
// and in a file (CheckpointPath), replaced atomically. Its methods are safe for
// concurrent use.
type Publisher struct {
	key    *Key
	origin string
	head   func() (projector.TreeHead, error)
	path   string
	logger *slog.Logger

	mu     sync.Mutex
	latest *Signed
}

// NewPublisher publishes checkpoints of the tree head returns, signed with key,
// into path. A checkpoint already in path that key signed is the latest one;
// anything else there is replaced by the next.
func NewPublisher(key *Key, origin string, head func() (projector.TreeHead, error), path string, logger *slog.Logger) *Publisher {
	if origin == "" {
		origin = DefaultOrigin
	}
	if logger == nil {
		logger = slog.Default()
	}
	p := &Publisher{key: key, origin: origin, head: head, path: path, logger: logger}
	if b, err := os.ReadFile(path); err == nil {
		v, verr := note.NewVerifier(key.VerifierKey())
		if verr == nil {
			if cp, err := OpenCheckpoint(b, note.VerifierList(v)); err == nil {
				p.latest = &Signed{Checkpoint: cp, Note: b}
			}
		}
	}
	return p
}

// Latest is the latest checkpoint signed, false when none is.
func (p *Publisher) Latest() (Signed, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.latest == nil {
		return Signed{}, false
	}
	return *p.latest, true
}

// Publish signs a checkpoint of the tree as it is now, unless the latest one is of
// this very tree, and returns it.
func (p *Publisher) Publish() (Signed, error) {
	th, err := p.head()
	if err != nil {
		return Signed{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if l := p.latest; l != nil && l.Size == th.Size && l.Root == th.Root && l.Origin == p.origin {
		return *l, nil
	}
	cp := Checkpoint{Origin: p.origin, Size: th.Size, Root: th.Root}
	msg, err := p.key.Sign(cp)
	if err != nil {
		return Signed{}, err
	}
	if err := writeAtomic(p.path, msg); err != nil {
		return Signed{}, err
	}
	p.latest = &Signed{Checkpoint: cp, Note: msg}
	return *p.latest, nil
}

// Run publishes a checkpoint every interval until ctx ends. A failed one is
// logged and the next tick tries again.
func (p *Publisher) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := p.Publish(); err != nil {
				p.logger.Warn("ledger checkpoint not signed", "err", err)
			}
		}
	}
}

func writeAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("ledger: write checkpoint: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("ledger: write checkpoint: %w", err)
	}
	return nil
}

// Key is the key the publisher signs with.
func (p *Publisher) Key() *Key { return p.key }

// Origin is the origin its checkpoints name.
func (p *Publisher) Origin() string { return p.origin }
