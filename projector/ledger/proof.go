package ledger

import (
	"fmt"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Inclusion proves that a receipt's leaf is in a signed checkpoint's tree: what a
// public receipt carries under "ledger". Pending is set, and the proof and
// checkpoint left out, while no checkpoint covers the leaf yet.
type Inclusion struct {
	LeafIndex  int64       `json:"leaf_index"`
	LeafHash   tlog.Hash   `json:"leaf_hash"` // tlog.RecordHash of the receipt's data as the log holds it
	TreeSize   int64       `json:"tree_size,omitempty"`
	Proof      []tlog.Hash `json:"proof,omitempty"`
	Checkpoint string      `json:"checkpoint,omitempty"` // the signed checkpoint note
	Pending    bool        `json:"pending,omitempty"`
}

// Verify checks the signed checkpoint against known and the proof with
// tlog.CheckRecord, and returns the checkpoint. Errors match ErrCheckpoint or
// ErrProof.
func (in *Inclusion) Verify(known note.Verifiers) (Checkpoint, error) {
	if in.Pending || in.Checkpoint == "" {
		return Checkpoint{}, fmt.Errorf("%w: no checkpoint covers leaf %d yet: ask again after the next one (POST /api/ledger/checkpoint signs one now)", ErrProof, in.LeafIndex)
	}
	cp, err := OpenCheckpoint([]byte(in.Checkpoint), known)
	if err != nil {
		return Checkpoint{}, err
	}
	if cp.Size != in.TreeSize {
		return Checkpoint{}, fmt.Errorf("%w: the proof is for a tree of %d receipts, the checkpoint's has %d", ErrProof, in.TreeSize, cp.Size)
	}
	if err := tlog.CheckRecord(in.Proof, cp.Size, cp.Root, in.LeafIndex, in.LeafHash); err != nil {
		return Checkpoint{}, fmt.Errorf("%w: leaf %d is not in the signed tree of %d receipts: %v", ErrProof, in.LeafIndex, cp.Size, err)
	}
	return cp, nil
}

// Consistency proves that the tree of To receipts extends the tree of From: what
// GET /api/ledger/consistency answers.
type Consistency struct {
	From     int64       `json:"from"`
	To       int64       `json:"to"`
	FromRoot tlog.Hash   `json:"from_root"`
	ToRoot   tlog.Hash   `json:"to_root"`
	Proof    []tlog.Hash `json:"proof"`
}

// Verify checks the proof with tlog.CheckTree: ErrProof when it does not hold.
func (c *Consistency) Verify() error {
	if err := tlog.CheckTree(c.Proof, c.To, c.ToRoot, c.From, c.FromRoot); err != nil {
		return fmt.Errorf("%w: the tree of %d receipts does not extend the tree of %d: %v", ErrProof, c.To, c.From, err)
	}
	return nil
}

// Between checks that the consistency proof joins two signed checkpoints: its
// sizes and roots are theirs, and it verifies.
func (c *Consistency) Between(older, newer Checkpoint) error {
	if c.From != older.Size || c.FromRoot != older.Root || c.To != newer.Size || c.ToRoot != newer.Root {
		return fmt.Errorf("%w: the proof joins trees of %d and %d receipts with other roots than the checkpoints'", ErrProof, c.From, c.To)
	}
	return c.Verify()
}

// Published is a signed checkpoint as GET and POST /api/ledger/checkpoint answer
// it: its fields, and the signed note that proves them.
type Published struct {
	Origin     string    `json:"origin"`
	TreeSize   int64     `json:"tree_size"`
	RootHash   tlog.Hash `json:"root_hash"`
	Checkpoint string    `json:"checkpoint"`
}

// Published is s as the checkpoint routes answer it.
func (s Signed) Published() Published {
	return Published{Origin: s.Origin, TreeSize: s.Size, RootHash: s.Root, Checkpoint: string(s.Note)}
}
