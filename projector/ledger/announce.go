package ledger

import (
	"encoding/base64"
	"fmt"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
	"golang.org/x/mod/sumdb/note"
)

// Announcement is the key's announcement (wire.NodeKeyAnnounced) for the node
// whose log origin is origin, signed by the key itself, and the subject it goes on.
func (k *Key) Announcement(origin string) (string, wire.NodeKeyAnnounced, error) {
	v, err := note.NewVerifier(k.verifier)
	if err != nil {
		return "", wire.NodeKeyAnnounced{}, fmt.Errorf("ledger: %w", err)
	}
	sig, err := k.signer.Sign(wire.NodeKeyStatement(origin, k.verifier))
	if err != nil {
		return "", wire.NodeKeyAnnounced{}, fmt.Errorf("ledger: sign the key's announcement: %w", err)
	}
	a := wire.NodeKeyAnnounced{Origin: origin, Verifier: k.verifier, Signature: base64.StdEncoding.EncodeToString(sig)}
	return wire.NodeKeySubject(projector.NodeKeyID(v)), a, nil
}

// KeysOf is the keys document of a node: its own key first, then every other key
// the nodes of its log announced (projector.NodeKeys).
func KeysOf(origin string, own *Key, announced []projector.NodeKey) Keys {
	doc := Keys{Origin: origin, Keys: []KeyInfo{own.Info()}}
	for _, a := range announced {
		if a.Verifier == own.verifier {
			continue
		}
		info, err := verifierInfo(a.Verifier)
		if err != nil {
			continue // the fold keeps parsable keys only
		}
		info.Origin = a.Origin
		doc.Keys = append(doc.Keys, info)
	}
	return doc
}
