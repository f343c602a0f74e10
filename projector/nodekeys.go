package projector

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/note"
)

// Node keys (wire.NodeKeyAnnounced). The fold keeps every announced key whose
// announcement its own key signed, in the node_keys bucket (NodeKey JSON), which
// the digest covers: every node and a replay list the same keys. An announcement
// whose signature does not verify, or whose subject names another key, is skipped:
// a key is listed only when whoever announced it holds it.
//
// A key's id is a 32-bit hash, which another key can be made to share: the first
// key announced under an id is stored under the id, and every other key of that id
// under the id, a space and its verifier (nodeKeyEntry), so a key announced first
// with a colliding id cannot shadow the real one: both are listed, and a reader
// holding both cannot take one for the other (note refuses an ambiguous key).
var bucketNodeKeys = []byte("node_keys")

// NodeKey is one announced checkpoint key.
type NodeKey struct {
	// Origin is the log origin the announcing node names in its checkpoints.
	Origin string `json:"origin"`
	// Verifier is the note verifier key (name+hash+base64).
	Verifier string `json:"verifier"`
	// Seq is the control-stream sequence of the first announcement.
	Seq uint64 `json:"seq"`
}

// NodeKeyID is the id of the key of the note verifier v, as its announcement's
// subject names it: the key hash in hex.
func NodeKeyID(v note.Verifier) string { return fmt.Sprintf("%08x", v.KeyHash()) }

func (f *folder) nodeKeyAnnounced(s *eventlog.Stored, subj wire.Subject) error {
	var a wire.NodeKeyAnnounced
	if err := decodeData(s, &a); err != nil {
		return err
	}
	v, err := note.NewVerifier(a.Verifier)
	if err != nil {
		return skipf(reasonBadData, "node key announcement: %q is not a note verifier key", clip(a.Verifier))
	}
	if err := sameKey("verifier's key hash", NodeKeyID(v), subj.Key); err != nil {
		return err
	}
	sig, err := base64.StdEncoding.DecodeString(a.Signature)
	if err != nil || !v.Verify(wire.NodeKeyStatement(a.Origin, a.Verifier), sig) {
		return skipf(reasonBadData, "node key announcement of %s: the signature is not the key's own", clip(v.Name()))
	}
	entry, err := nodeKeyEntry(f.tx, subj.Key, a.Verifier)
	if entry == nil || err != nil {
		return err // announced before
	}
	b, err := json.Marshal(NodeKey{Origin: a.Origin, Verifier: a.Verifier, Seq: s.Seq})
	if err != nil {
		return err
	}
	return put(f.tx, bucketNodeKeys, entry, b)
}

// nodeKeyEntry is the node_keys entry a key verifier of id id goes under, or nil
// when it is listed already: the id when no key of that id is, else the id, a
// space and the verifier. The entries of an id sort after it, so the keys are
// listed by id and, within an id, the first announced first, then the others by
// verifier.
func nodeKeyEntry(tx *bolt.Tx, id, verifier string) ([]byte, error) {
	first, err := get(tx, bucketNodeKeys, []byte(id))
	if first == nil || err != nil {
		return []byte(id), err
	}
	var k NodeKey
	if err := json.Unmarshal(first, &k); err != nil {
		return nil, err
	}
	other := []byte(id + " " + verifier)
	if k.Verifier == verifier || tx.Bucket(bucketNodeKeys).Get(other) != nil {
		return nil, nil
	}
	return other, nil
}

// NodeKeys is every checkpoint key the nodes announced, in the order of their ids
// (of keys sharing an id, the first announced first).
func (p *Projector) NodeKeys() ([]NodeKey, error) {
	var out []NodeKey
	err := p.view(func(tx *bolt.Tx) error {
		return each(tx, bucketNodeKeys, func(_, v []byte) error {
			var k NodeKey
			if err := json.Unmarshal(v, &k); err != nil {
				return err
			}
			out = append(out, k)
			return nil
		})
	})
	return out, err
}
