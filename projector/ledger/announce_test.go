package ledger_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
	"github.com/capdir/capdir/projector/ledger"
)

// The fold lists a key its own signature announces, once, and skips an
// announcement signed by another key, one whose subject names another key and one
// whose data does not decode; the keys document lists the node's own key first,
// then the others, and opens the other node's checkpoints.
func TestNodeKeyAnnouncementsFolded(t *testing.T) {
	ctx := context.Background()
	l := logtest.Open(t, "")
	key := func(name string) *ledger.Key {
		k, err := ledger.LoadKey(t.TempDir(), name)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	a, b, c := key("node-a"), key("node-b"), key("node-c")
	appendAnn := func(subject string, data any) {
		t.Helper()
		ev, err := l.NewEvent(wire.TypeNodeKeyAnnounced, wire.NodeActor, data)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(ctx, subject, ev); err != nil {
			t.Fatal(err)
		}
	}
	subjB, annB, err := b.Announcement("origin-b")
	if err != nil {
		t.Fatal(err)
	}
	appendAnn(subjB, annB)
	appendAnn(subjB, annB) // announced again at a restart
	// c's verifier with a signature by b: whoever announced it does not hold c's key.
	subjC, annC, _ := c.Announcement("origin-c")
	forged := annC
	forged.Signature = annB.Signature
	appendAnn(subjC, forged)
	// A valid announcement of c on b's subject.
	appendAnn(subjB, annC)
	appendAnn(subjC, map[string]int{"verifier": 1})
	// The origin is signed too: b's signature does not cover another origin.
	other := annB
	other.Origin = "origin-evil"
	appendAnn(subjB, other)

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
	if len(keys) != 1 || keys[0].Verifier != b.VerifierKey() || keys[0].Origin != "origin-b" {
		t.Fatalf("node keys %+v, want b's alone", keys)
	}
	doc := ledger.KeysOf("origin-a", a, keys)
	if len(doc.Keys) != 2 || doc.Keys[0].Verifier != a.VerifierKey() || doc.Keys[1].Verifier != b.VerifierKey() || doc.Keys[1].Origin != "origin-b" {
		t.Fatalf("keys document %+v, want a's then b's", doc)
	}
	// Listed once, also when the answering node's own key was announced.
	if again := ledger.KeysOf("origin-b", b, keys); len(again.Keys) != 1 {
		t.Fatalf("keys document %+v, want b's once", again)
	}
	signed, err := b.Sign(ledger.Checkpoint{Origin: "origin-b", Size: 0})
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	known, err := ledger.ParseKeys(js)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.OpenCheckpoint(signed, known); err != nil {
		t.Fatalf("b's checkpoint with a's keys document: %v", err)
	}
}
