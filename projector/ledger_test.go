package projector_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/tlog"
)

// mth is RFC 6962's Merkle tree hash of the leaves, written from the RFC's
// definition, apart from the library the projector uses to store its tree.
func mth(leaves [][]byte) [32]byte {
	switch len(leaves) {
	case 0:
		return sha256.Sum256(nil)
	case 1:
		return sha256.Sum256(append([]byte{0}, leaves[0]...))
	}
	k := 1
	for k*2 < len(leaves) {
		k *= 2
	}
	l, r := mth(leaves[:k]), mth(leaves[k:])
	return sha256.Sum256(append(append([]byte{1}, l[:]...), r[:]...))
}

// logReceipts is the data of every receipt in the data stream, in log order,
// each invocation's first only.
func logReceipts(t testing.TB, l *eventlog.Log) (ids []string, data [][]byte) {
	t.Helper()
	seen := map[string]bool{}
	err := l.Read(context.Background(), wire.DataStream, 1, func(s eventlog.Stored) error {
		if s.Type != wire.TypeReceipt {
			return nil
		}
		var rc wire.Receipt
		if err := s.DataAs(&rc); err != nil {
			return err
		}
		if !seen[rc.InvocationID] {
			seen[rc.InvocationID] = true
			ids, data = append(ids, rc.InvocationID), append(data, append([]byte(nil), s.Data...))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids, data
}

// Every receipt folded is the next leaf, its data as the log holds it; a second
// receipt for an invocation adds none. The root is RFC 6962's of those leaves,
// every leaf's inclusion proof and every size's consistency proof check with
// tlog's own verifier, and a replay builds the same tree (the digest covers it).
func TestLedgerIsTheReceiptsInLogOrder(t *testing.T) {
	l := logtest.Open(t, "")
	appendMix(t, l, 37)
	appendEv(t, l, wire.ReceiptSubject("ROW_00003"), t0, wire.TypeReceipt, wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: "inv_00003", Key: "ROW_00003", Status: "RAN_WITH_ERROR"}, BreakerKind: "not_counted"})
	p := open(t, filepath.Join(t.TempDir(), "p.db"), l)
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	ids, data := logReceipts(t, l)
	if len(ids) != 37 {
		t.Fatalf("the log holds %d first receipts, want 37", len(ids))
	}
	head, err := p.LedgerHead()
	if err != nil {
		t.Fatal(err)
	}
	if head.Size != 37 || head.Root != tlog.Hash(mth(data)) {
		t.Fatalf("head %d %s, want 37 %s", head.Size, head.Root, tlog.Hash(mth(data)))
	}
	for i, id := range ids {
		leaf, err := p.LedgerLeaf(id)
		if err != nil || leaf.Index != int64(i) || string(leaf.Data) != string(data[i]) {
			t.Fatalf("leaf of %s: %+v %v, want index %d with the log's data", id, leaf, err, i)
		}
		proof, err := p.InclusionProof(int64(i), head.Size)
		if err != nil {
			t.Fatal(err)
		}
		if err := tlog.CheckRecord(proof, head.Size, head.Root, int64(i), tlog.RecordHash(data[i])); err != nil {
			t.Fatalf("inclusion of leaf %d: %v", i, err)
		}
	}
	for from := int64(1); from <= head.Size; from++ {
		proof, err := p.ConsistencyProof(from, head.Size)
		if err != nil {
			t.Fatal(err)
		}
		old, err := p.LedgerTreeHash(from)
		if err != nil {
			t.Fatal(err)
		}
		if old != tlog.Hash(mth(data[:from])) {
			t.Fatalf("tree hash at %d differs from RFC 6962's", from)
		}
		if err := tlog.CheckTree(proof, head.Size, head.Root, from, old); err != nil {
			t.Fatalf("consistency %d -> %d: %v", from, head.Size, err)
		}
	}
	if _, err := p.ConsistencyProof(1, head.Size+1); err == nil {
		t.Fatal("a proof to a size beyond the ledger was given")
	}
	if _, err := p.LedgerLeaf("inv_none"); err != projector.ErrNotFound {
		t.Fatalf("leaf of an unknown invocation: %v, want ErrNotFound", err)
	}
	assertReplayDigest(t, l, p)
}

// The digest covers the tree: a projection whose tree lost a leaf digests apart
// from its replay.
func TestDigestCoversTheLedger(t *testing.T) {
	l := logtest.Open(t, "")
	appendMix(t, l, 9)
	path := filepath.Join(t.TempDir(), "p.db")
	p := open(t, path, l)
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	want, _ := p.Digest()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		c := tx.Bucket([]byte("ledger_leaves")).Cursor()
		k, _ := c.Last()
		return tx.Bucket([]byte("ledger_leaves")).Delete(k)
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := projector.FileDigest(path); err != nil || got == want {
		t.Fatalf("digest %s (%v) of a tree without its last leaf, %s with it", got, err, want)
	}
}

// A projection an older version wrote has receipts and no tree: Open builds it
// from them in the order they were folded, to the tree (and digest) a replay gives.
func TestLedgerBuiltForAFileWithoutOne(t *testing.T) {
	l := logtest.Open(t, "")
	appendMix(t, l, 21)
	path := filepath.Join(t.TempDir(), "p.db")
	p, err := projector.Open(projector.Config{Path: path, Log: l})
	if err != nil {
		t.Fatal(err)
	}
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	want, _ := p.LedgerHead()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// The file as a version before the ledger left it: its receipts as the
	// first layout stores them, and no tree.
	if err := projector.ToFirstLedgerLayout(path); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range []string{"ledger_hashes", "ledger_leaves", "ledger_index"} {
			if err := tx.DeleteBucket([]byte(b)); err != nil {
				return err
			}
		}
		return tx.Bucket([]byte("meta")).Delete([]byte("ledger/size"))
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	p2 := open(t, path, l)
	got, err := p2.LedgerHead()
	if err != nil || got != want {
		t.Fatalf("head after building: %+v %v, want %+v", got, err, want)
	}
	assertReplayDigest(t, l, p2)
}

// A projection an older version wrote keeps its ledger in the first layout
// (every leaf hash among the tree's hashes, an index from invocation id to
// leaf): Open moves it to the current one in place, the index gone, the tree,
// the leaves and the digest those of a replay of the log; a read-only look at
// the file before names what to do.
func TestLedgerInTheFirstLayoutMovedInPlace(t *testing.T) {
	l := logtest.Open(t, "")
	appendMix(t, l, 23)
	path := filepath.Join(t.TempDir(), "p.db")
	p := open(t, path, l)
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	want, _ := p.LedgerHead()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := projector.ToFirstLedgerLayout(path); err != nil {
		t.Fatal(err)
	}
	lf, err := projector.OpenLedgerFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lf.Head(); !errors.Is(err, projector.ErrLedger) || !strings.Contains(err.Error(), "start a node on it once") {
		t.Errorf("head of a ledger in the first layout: %v", err)
	}
	lf.Close()
	p2 := open(t, path, l)
	got, err := p2.LedgerHead()
	if err != nil || got != want {
		t.Fatalf("head after moving: %+v %v, want %+v", got, err, want)
	}
	ids, data := logReceipts(t, l)
	for i, id := range ids {
		leaf, err := p2.LedgerLeaf(id)
		if err != nil || leaf.Index != int64(i) || string(leaf.Data) != string(data[i]) || leaf.Hash != tlog.RecordHash(data[i]) {
			t.Fatalf("leaf of %s: %+v %v, want index %d with the log's data", id, leaf, err, i)
		}
	}
	assertReplayDigest(t, l, p2)
	if err := p2.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("ledger_index")) != nil {
			t.Error("the first layout's index is still in the file")
		}
		return nil
	})
}
