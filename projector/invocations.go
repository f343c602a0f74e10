package projector

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	bolt "go.etcd.io/bbolt"
)

// Invocation is what the projection knows of an invocation id: its first request
// (the first one stands; a later request under the same id, a duplicate or
// capdir's re-run of an approved call, changes nothing here) and its receipt.
type Invocation struct {
	// Seq is the data-stream sequence of the first request; 0 when a version that
	// did not record it folded the request.
	Seq uint64
	// Client is the bus client that sent the first request; "" for capdir's own
	// request subject.
	Client string
	// Digest is wire.RequestDigest of the first request, when it carried a chosen
	// invocation id (wire.Chosen); HasDigest says whether it was recorded.
	Digest    [sha256.Size]byte
	HasDigest bool
	// Key is the first request's key.
	Key string
	// Receipt is the receipt's data as the log holds it, nil while none is folded.
	Receipt json.RawMessage
}

// invocationFormat starts every value of the invocations bucket this version
// writes: a key (what older versions stored) never starts with it.
const invocationFormat = 0x01

// requestDigestHead is the part of a request with a chosen invocation id the fold
// reads to record its digest.
type requestDigestHead struct {
	Body  string          `json:"body"`
	Args  json.RawMessage `json:"args"`
	Shape bool            `json:"shape"`
}

// invocationValue encodes the first request of an invocation: the format byte,
// its sequence, its bus client (length-prefixed), its digest when it carried a
// chosen id (a flag byte, then the digest), then its key.
// It is built in a slice values hands out (a fresh one when values is nil).
func invocationValue(values *arena, s *eventlog.Stored, subj wire.Subject, r *requestHead) []byte {
	var digest []byte
	if wire.Chosen(r.InvocationID, s.ID) {
		var h requestDigestHead
		if s.DataAs(&h) == nil {
			d := wire.RequestDigest(r.Key, h.Body, h.Args, h.Shape)
			digest = d[:]
		}
	}
	v := values.take(1 + 8 + 1 + len(subj.Client) + 1 + len(digest) + len(r.Key))
	v = append(v, invocationFormat)
	v = binary.BigEndian.AppendUint64(v, s.Seq)
	v = append(v, byte(len(subj.Client)))
	v = append(v, subj.Client...)
	v = append(v, byte(len(digest)))
	v = append(v, digest...)
	return append(v, r.Key...)
}

// decodeInvocation reads a value of the invocations bucket; one an older version
// wrote holds only the key.
func decodeInvocation(v []byte) (Invocation, error) {
	var inv Invocation
	if len(v) == 0 || v[0] != invocationFormat {
		inv.Key = string(v)
		return inv, nil
	}
	bad := fmt.Errorf("projector: invocation record of %d bytes does not decode", len(v))
	v = v[1:]
	if len(v) < 9 {
		return inv, bad
	}
	inv.Seq = binary.BigEndian.Uint64(v)
	n := int(v[8])
	v = v[9:]
	if len(v) < n+1 {
		return inv, bad
	}
	inv.Client = string(v[:n])
	v = v[n:]
	d := int(v[0])
	v = v[1:]
	switch {
	case d == sha256.Size && len(v) >= d:
		copy(inv.Digest[:], v)
		inv.HasDigest = true
	case d != 0:
		return inv, bad
	}
	inv.Key = string(v[d:])
	return inv, nil
}

// Invocation returns what the projection holds of invocation id: its first
// request and its receipt, if any; ErrNotFound when no request under id is folded.
func (p *Projector) Invocation(id string) (Invocation, error) { return p.invocation(id, true) }

// FirstRequest is Invocation without the receipt (Receipt stays nil): the first
// request under id, read without decoding a stored receipt.
func (p *Projector) FirstRequest(id string) (Invocation, error) { return p.invocation(id, false) }

func (p *Projector) invocation(id string, withReceipt bool) (Invocation, error) {
	var inv Invocation
	found := false
	err := p.view(func(tx *bolt.Tx) error {
		v, err := get(tx, bucketInvocations, []byte(id))
		if err != nil || v == nil {
			return err
		}
		found = true
		if inv, err = decodeInvocation(v); err != nil || !withReceipt {
			return err
		}
		rc, err := getReceipt(tx, []byte(id))
		if rc != nil {
			inv.Receipt = append(json.RawMessage(nil), rc...)
		}
		return err
	})
	if err != nil {
		return Invocation{}, fmt.Errorf("projector: invocation %s: %w", id, err)
	}
	if !found {
		return Invocation{}, ErrNotFound
	}
	return inv, nil
}
