package api

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
	"github.com/capdir/capdir/projector/ledger"
)

// The ledger routes (package projector/ledger): the node's public keys, its
// latest signed checkpoint, a checkpoint signed now, and consistency proofs
// between two tree sizes. Everything they answer is hashes and signatures, public
// like the public receipt: only signing a checkpoint now takes the owner key.
func (s *Server) registerLedger() {
	s.handle("GET /.well-known/capdir-keys", s.ledgerKeys)
	s.handle("GET /api/ledger/checkpoint", s.ledgerCheckpoint)
	s.handle("POST /api/ledger/checkpoint", s.owner(s.ledgerPublish))
	s.handle("GET /api/ledger/consistency", s.ledgerConsistency)
}

// maxTreeSize bounds from= and to= before they are parsed further: a tree size
// has at most 19 digits.
const maxTreeSize = 19

func (s *Server) ledgerKeys(w http.ResponseWriter, r *http.Request) error {
	pub := s.cfg.Ledger
	if pub == nil {
		return errNoLedger
	}
	announced, err := s.cfg.Projector.NodeKeys()
	if err != nil {
		return newError(ErrUnavailable, "%w", err)
	}
	writeJSON(w, http.StatusOK, ledger.KeysOf(pub.Origin(), pub.Key(), announced))
	return nil
}

// ledgerCheckpoint is the latest signed checkpoint; before the first (a node
// signs one as it starts) one is signed now.
func (s *Server) ledgerCheckpoint(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Ledger == nil {
		return errNoLedger
	}
	latest, ok := s.cfg.Ledger.Latest()
	if !ok {
		var err error
		if latest, err = s.cfg.Ledger.Publish(); err != nil {
			return newError(ErrUnavailable, "%w", err)
		}
	}
	writeJSON(w, http.StatusOK, latest.Published())
	return nil
}

// ledgerPublish signs a checkpoint of the tree as it is once every receipt
// appended so far is folded.
func (s *Server) ledgerPublish(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Ledger == nil {
		return errNoLedger
	}
	s.settle(r)
	signed, err := s.cfg.Ledger.Publish()
	if err != nil {
		return newError(ErrUnavailable, "%w", err)
	}
	writeJSON(w, http.StatusOK, signed.Published())
	return nil
}

// ledgerConsistency proves that the tree of to receipts extends the tree of from.
func (s *Server) ledgerConsistency(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if q.Get("from") == "" || q.Get("to") == "" {
		return badRequest(consistencyUsage)
	}
	from, err := treeSize("from", q.Get("from"))
	if err != nil {
		return err
	}
	to, err := treeSize("to", q.Get("to"))
	if err != nil {
		return err
	}
	if from > to {
		return badRequest(fromAfterTo(from, to))
	}
	s.settle(r) // a tree size a receipt just written made is one the projection holds
	proof, err := s.cfg.Projector.ConsistencyProof(from, to)
	if err != nil {
		return ledgerErr(err)
	}
	c := ledger.Consistency{From: from, To: to, Proof: proof}
	if c.FromRoot, err = s.cfg.Projector.LedgerTreeHash(from); err != nil {
		return ledgerErr(err)
	}
	if c.ToRoot, err = s.cfg.Projector.LedgerTreeHash(to); err != nil {
		return ledgerErr(err)
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func treeSize(name, v string) (int64, error) {
	if len(v) > maxTreeSize {
		return 0, badRequest(badTreeSize(name, v[:maxTreeSize]+"…"))
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 || strconv.FormatInt(n, 10) != v {
		return 0, badRequest(badTreeSize(name, v))
	}
	return n, nil
}

func ledgerErr(err error) error {
	var size *projector.LedgerSizeError
	if errors.As(err, &size) {
		return badRequest(beyondLedger(size))
	}
	return newError(ErrUnavailable, "%w", err)
}

// PublicReceipt is the public view of a receipt with its place in the ledger: the
// leaf and its inclusion proof against the latest signed checkpoint (Ledger's
// Pending while none covers it yet). Ledger is nil on a node without a ledger.
type PublicReceipt struct {
	wire.PublicReceipt
	Ledger *ledger.Inclusion `json:"ledger,omitempty"`
}

// publicReceipt is rc's public view with its inclusion proof.
func (s *Server) publicReceipt(rc *wire.Receipt) any {
	p := PublicReceipt{PublicReceipt: rc.Public()}
	if s.cfg.Ledger == nil {
		return p
	}
	leaf, err := s.cfg.Projector.LedgerLeaf(rc.InvocationID)
	if err != nil {
		return p // a receipt the projection holds has a leaf; without one, no proof
	}
	in := &ledger.Inclusion{LeafIndex: leaf.Index, LeafHash: leaf.Hash, Pending: true}
	p.Ledger = in
	latest, ok := s.cfg.Ledger.Latest()
	if !ok || leaf.Index >= latest.Size {
		return p
	}
	proof, err := s.cfg.Projector.InclusionProof(leaf.Index, latest.Size)
	if err != nil {
		return p
	}
	in.TreeSize, in.Proof, in.Checkpoint, in.Pending = latest.Size, proof, string(latest.Note), false
	return p
}
