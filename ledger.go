package capdir

import (
	"context"
	"fmt"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
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
	if err := n.announceKey(key); err != nil {
		return err
	}
	if _, err := n.ledger.Publish(); err != nil {
		return fmt.Errorf("node: sign the ledger's first checkpoint: %w", err)
	}
	return nil
}

// announceKey appends the announcement of the node's key to the control stream,
// unless the projection (caught up at start) holds it already, so that every node
// of the log lists it at /.well-known/capdir-keys.
func (n *Node) announceKey(key *ledger.Key) error {
	announced, err := n.proj.NodeKeys()
	if err != nil {
		return err
	}
	for _, a := range announced {
		if a.Verifier == key.VerifierKey() {
			return nil
		}
	}
	subject, a, err := key.Announcement(n.ledger.Origin())
	if err != nil {
		return err
	}
	ev, err := n.log.NewEvent(wire.TypeNodeKeyAnnounced, wire.NodeActor, a)
	if err != nil {
		return fmt.Errorf("node: announce the ledger key: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), announceTimeout)
	defer cancel()
	if _, err := n.log.Append(ctx, subject, ev); err != nil {
		return fmt.Errorf("node: announce the ledger key: %w", err)
	}
	return n.proj.CatchUp(ctx, nil) // Run has not started yet
}

// announceTimeout bounds the append of the key's announcement at start.
const announceTimeout = 30 * time.Second

// runLedger signs checkpoints on the configured schedule until ctx ends.
func (n *Node) runLedger(ctx context.Context) error {
	if every := n.cfg.Ledger.every(); every > 0 {
		n.ledger.Run(ctx, every)
	}
	return nil
}

// Ledger signs and keeps the node's checkpoints of its receipt ledger.
func (n *Node) Ledger() *ledger.Publisher { return n.ledger }
