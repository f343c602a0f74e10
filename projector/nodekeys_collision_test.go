package projector_test

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
	"github.com/capdir/capdir/projector/ledger"
	"golang.org/x/mod/sumdb/note"
)

// collidingVerifiers returns two note verifier keys of one Ed25519 key under two
// names whose 32-bit key hashes are the same (a birthday search over names), and
// the private key that signs for both.
func collidingVerifiers(t *testing.T) (a, b string, priv ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	key := append([]byte{1}, pub...) // note's Ed25519 algorithm byte, then the key
	seen := map[uint32]string{}
	for i := 0; ; i++ {
		name := fmt.Sprintf("n%d", i)
		sum := sha256.Sum256([]byte(name + "\n" + string(key)))
		h := binary.BigEndian.Uint32(sum[:])
		if other, ok := seen[h]; ok {
			a, errA := note.NewEd25519VerifierKey(other, pub)
			b, errB := note.NewEd25519VerifierKey(name, pub)
			if errA != nil || errB != nil {
				t.Fatal(errA, errB)
			}
			return a, b, priv
		}
		seen[h] = name
	}
}

// Two keys whose ids collide, each announced by its own valid signature: the one
// announced first does not shadow the other. Both are listed, at a restart's
// announcement again once each, the keys document lists both, and a replay of the
// log has the live projection's digest.
func TestNodeKeysWithACollidingIDAreBothKept(t *testing.T) {
	ctx := context.Background()
	l := logtest.Open(t, "")
	forged, real, priv := collidingVerifiers(t)
	vf, _ := note.NewVerifier(forged)
	vr, _ := note.NewVerifier(real)
	if vf.KeyHash() != vr.KeyHash() || forged == real {
		t.Fatalf("no collision: %s %s", forged, real)
	}
	announce := func(origin, verifier string) {
		t.Helper()
		sig := ed25519.Sign(priv, []byte(wire.NodeKeyStatement(origin, verifier)))
		ev, err := l.NewEvent(wire.TypeNodeKeyAnnounced, wire.NodeActor,
			wire.NodeKeyAnnounced{Origin: origin, Verifier: verifier, Signature: base64.StdEncoding.EncodeToString(sig)})
		if err != nil {
			t.Fatal(err)
		}
		v, _ := note.NewVerifier(verifier)
		if _, err := l.Append(ctx, wire.NodeKeySubject(projector.NodeKeyID(v)), ev); err != nil {
			t.Fatal(err)
		}
	}
	announce("origin-forged", forged) // first come
	announce("origin-real", real)
	announce("origin-real", real) // a restart
	announce("origin-forged", forged)

	p, err := projector.Open(projector.Config{Path: filepath.Join(t.TempDir(), "p.db"), Log: l})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.CatchUp(ctx, nil); err != nil {
		t.Fatal(err)
	}
	keys, err := p.NodeKeys()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0].Verifier != forged || keys[1].Verifier != real || keys[1].Origin != "origin-real" {
		t.Fatalf("node keys %+v, want the first announced, then the real one", keys)
	}
	own, err := ledger.LoadKey(t.TempDir(), "own")
	if err != nil {
		t.Fatal(err)
	}
	doc := ledger.KeysOf("origin-own", own, keys)
	if len(doc.Keys) != 3 || doc.Keys[2].Verifier != real {
		t.Fatalf("keys document %+v, want the node's own key and both colliding ones", doc)
	}
	assertReplayDigest(t, l, p)
}
