package capdir

import (
	"context"
	"fmt"
	"time"

	"github.com/capdir/capdir/projector/ledger"
)

// DefaultCheckpointEvery is how often a node signs a checkpoint of its receipt
// ledger when LedgerConfig.Every is zero.
const DefaultCheckpointEvery = time.Minute

// LedgerConfig configures the node's receipt ledger (package projector/ledger).
type LedgerConfig struct {
	// Origin names the log in the node's checkpoints, and its key when the key is
	// made (ledger.DefaultOrigin when empty): no spaces or '+'.
	Origin string
	// Every is how often the node signs a checkpoint of the tree as it is
	// (DefaultCheckpointEvery when zero; never on a schedule when negative, only
	// at start and on POST /api/ledger/checkpoint).
	Every time.Duration
}

func (c LedgerConfig) every() time.Duration {
	if c.Every == 0 {
		return DefaultCheckpointEvery
	}
	return c.Every
}

// newLedger loads (or, the first time, makes) the node's ledger key under its data
// dir and signs a checkpoint of the tree as the projection holds it now.
func (n *Node) newLedger(cfg Config) error {
	key, err := ledger.LoadKey(cfg.Log.DataDir, cfg.Ledger.Origin)
	if err != nil {
		return err
	}
	n.ledger = ledger.NewPublisher(key, cfg.Ledger.Origin, n.proj.LedgerHead, ledger.CheckpointPath(cfg.Log.DataDir), n.logger)
	if _, err := n.ledger.Publish(); err != nil {
		return fmt.Errorf("node: sign the ledger's first checkpoint: %w", err)
	}
	return nil
}

// runLedger signs checkpoints on the configured schedule until ctx ends.
func (n *Node) runLedger(ctx context.Context) error {
	if every := n.cfg.Ledger.every(); every > 0 {
		n.ledger.Run(ctx, every)
	}
	return nil
}

// Ledger signs and keeps the node's checkpoints of its receipt ledger.
func (n *Node) Ledger() *ledger.Publisher { return n.ledger }
