package ledger_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capdir/capdir/projector"
	"github.com/capdir/capdir/projector/ledger"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

func verifiers(t testing.TB, keys ...*ledger.Key) note.Verifiers {
	t.Helper()
	var lines []string
	for _, k := range keys {
		lines = append(lines, k.VerifierKey())
	}
	vs, err := ledger.ParseKeys([]byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// The key is made at the first load, mode 0600, and read back the same after.
func TestKeyMadeOnceMode0600(t *testing.T) {
	dir := t.TempDir()
	k, err := ledger.LoadKey(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(ledger.KeyPath(dir))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v, want mode 0600", st.Mode(), err)
	}
	again, err := ledger.LoadKey(dir, "other")
	if err != nil || again.VerifierKey() != k.VerifierKey() || k.Name() != ledger.DefaultOrigin {
		t.Fatalf("reloaded key %q (%v), want %q named %s", again.VerifierKey(), err, k.VerifierKey(), ledger.DefaultOrigin)
	}
	if err := os.WriteFile(ledger.KeyPath(dir), []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.LoadKey(dir, ""); err == nil || !strings.Contains(err.Error(), "move it aside") {
		t.Fatalf("a file that holds no key: %v", err)
	}
}

// A checkpoint opens with its signer's public key; with another key only (even
// one of the same name), or changed after it was signed, it is refused.
func TestCheckpointSignedByAnotherKeyRefused(t *testing.T) {
	a, _ := ledger.LoadKey(t.TempDir(), "capdir")
	b, _ := ledger.LoadKey(t.TempDir(), "capdir")
	cp := ledger.Checkpoint{Origin: "capdir", Size: 3, Root: tlog.RecordHash([]byte("x"))}
	msg, err := a.Sign(cp)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ledger.OpenCheckpoint(msg, verifiers(t, a))
	if err != nil || got != cp {
		t.Fatalf("open with the signer's key: %+v %v", got, err)
	}
	got, err = ledger.OpenCheckpoint(msg, verifiers(t, a, b))
	if err != nil || got != cp {
		t.Fatalf("open with the signer's key among others: %+v %v", got, err)
	}
	if _, err := ledger.OpenCheckpoint(msg, verifiers(t, b)); !errors.Is(err, ledger.ErrCheckpoint) || !strings.Contains(err.Error(), "not signed by any of the public keys") {
		t.Fatalf("open with another key: %v", err)
	}
	changed := []byte(strings.Replace(string(msg), "\n3\n", "\n4\n", 1))
	if _, err := ledger.OpenCheckpoint(changed, verifiers(t, a)); !errors.Is(err, ledger.ErrCheckpoint) || !strings.Contains(err.Error(), "does not verify") {
		t.Fatalf("open a changed checkpoint: %v", err)
	}
	for _, bad := range []string{"", "capdir\n3\n", "just text\n\n— nobody AAAA\n"} {
		if _, err := ledger.OpenCheckpoint([]byte(bad), verifiers(t, a)); !errors.Is(err, ledger.ErrCheckpoint) {
			t.Fatalf("open %q: %v", bad, err)
		}
	}
}

func TestParseCheckpoint(t *testing.T) {
	root := tlog.RecordHash([]byte("r"))
	good := ledger.Checkpoint{Origin: "o", Size: 12, Root: root}
	for _, tc := range []struct {
		text string
		ok   bool
	}{
		{good.Text(), true},
		{good.Text() + "extension line\n", true},
		{"o\n-1\n" + root.String() + "\n", false},
		{"o\n012\n" + root.String() + "\n", false},
		{"o\n12\nAAAA\n", false},
		{"\n12\n" + root.String() + "\n", false},
		{"o\n12\n" + root.String(), false},
	} {
		got, err := ledger.ParseCheckpoint(tc.text)
		if tc.ok != (err == nil) || tc.ok && got != good {
			t.Errorf("ParseCheckpoint(%q) = %+v, %v", tc.text, got, err)
		}
	}
}

func leafHashes(n int) ([]tlog.Hash, []string) {
	hs, ids := make([]tlog.Hash, n), make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("inv_%03d", i)
		hs[i] = tlog.RecordHash([]byte(ids[i]))
	}
	return hs, ids
}

// treeOf stores hs as tlog stores a tree, for proofs.
func treeOf(t testing.TB, hs []tlog.Hash) tlog.HashReader {
	var stored []tlog.Hash
	r := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = stored[x]
		}
		return out, nil
	})
	for i, h := range hs {
		s, err := tlog.StoredHashesForRecordHash(int64(i), h, r)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, s...)
	}
	return r
}

// Check trusts the copy whose root is the checkpoint's and names the first leaf
// where another copy differs; with no copy matching it names where they disagree.
func TestCheckNamesTheFirstReceiptThatDoesNotVerify(t *testing.T) {
	hs, ids := leafHashes(40)
	root, _ := tlog.TreeHash(40, treeOf(t, hs))
	cp := ledger.Checkpoint{Origin: "o", Size: 40, Root: root}
	cp30 := ledger.Checkpoint{Origin: "o", Size: 30}
	cp30.Root, _ = tlog.TreeHash(30, treeOf(t, hs[:30]))
	copyOf := func(name string, change ...int) ledger.Copy {
		c := ledger.Copy{Name: name, Hashes: append([]tlog.Hash(nil), hs...), IDs: ids}
		for _, i := range change {
			c.Hashes[i][0] ^= 1
		}
		return c
	}
	var f *ledger.Failure
	if rep, err := ledger.Check(cp, 0, -1, copyOf("a"), copyOf("b")); err != nil || rep.Checked != 40 {
		t.Fatalf("two good copies: %+v %v", rep, err)
	}
	if rep, err := ledger.Check(cp30, 0, -1, copyOf("a")); err != nil || rep.Checked != 30 || rep.Uncovered != 10 {
		t.Fatalf("a copy beyond an older checkpoint: %+v %v", rep, err)
	}
	_, err := ledger.Check(cp, 0, -1, copyOf("tree"), copyOf("receipts", 17, 23))
	if !errors.As(err, &f) || f.Index != 17 || f.InvocationID != "inv_017" || f.Copy != "receipts" {
		t.Fatalf("receipts changed at 17 and 23: %v", err)
	}
	_, err = ledger.Check(cp, 20, 30, copyOf("tree"), copyOf("receipts", 17, 23))
	if !errors.As(err, &f) || f.Index != 23 {
		t.Fatalf("the range 20..30: %v", err)
	}
	_, err = ledger.Check(cp, 0, -1, copyOf("tree", 5), copyOf("receipts", 5))
	if !errors.Is(err, ledger.ErrNoCopyMatches) {
		t.Fatalf("every copy changed alike: %v", err)
	}
	_, err = ledger.Check(cp, 0, -1, copyOf("tree", 5), copyOf("receipts"), copyOf("log", 9))
	if !errors.As(err, &f) || f.Index != 5 || f.Copy != "tree" {
		t.Fatalf("the stored tree changed at 5: %v", err)
	}
	short := copyOf("log")
	short.Hashes = short.Hashes[:33]
	_, err = ledger.Check(cp, 0, -1, copyOf("tree"), short)
	if !errors.As(err, &f) || f.Index != 33 || !strings.Contains(f.Error(), "ends at 33") {
		t.Fatalf("a copy that lost its last receipts: %v", err)
	}
}

// Inclusion and consistency proofs check with tlog's verifier, against a signed
// checkpoint; changed, or under another key, they are refused.
func TestInclusionAndConsistencyVerify(t *testing.T) {
	k, _ := ledger.LoadKey(t.TempDir(), "")
	other, _ := ledger.LoadKey(t.TempDir(), "")
	hs, _ := leafHashes(25)
	r := treeOf(t, hs)
	root, _ := tlog.TreeHash(25, r)
	msg, _ := k.Sign(ledger.Checkpoint{Origin: "o", Size: 25, Root: root})
	for i := range int64(25) {
		proof, err := tlog.ProveRecord(25, i, r)
		if err != nil {
			t.Fatal(err)
		}
		in := ledger.Inclusion{LeafIndex: i, LeafHash: hs[i], TreeSize: 25, Proof: proof, Checkpoint: string(msg)}
		if _, err := in.Verify(verifiers(t, k)); err != nil {
			t.Fatalf("leaf %d: %v", i, err)
		}
		if _, err := in.Verify(verifiers(t, other)); !errors.Is(err, ledger.ErrCheckpoint) {
			t.Fatalf("leaf %d under another key: %v", i, err)
		}
		in.LeafHash[3] ^= 1
		if _, err := in.Verify(verifiers(t, k)); !errors.Is(err, ledger.ErrProof) {
			t.Fatalf("leaf %d with a changed hash: %v", i, err)
		}
	}
	for from := int64(1); from <= 25; from++ {
		proof, err := tlog.ProveTree(25, from, r)
		if err != nil {
			t.Fatal(err)
		}
		old, _ := tlog.TreeHash(from, r)
		c := ledger.Consistency{From: from, To: 25, FromRoot: old, ToRoot: root, Proof: proof}
		if err := c.Verify(); err != nil {
			t.Fatalf("%d -> 25: %v", from, err)
		}
		c.FromRoot[0] ^= 1
		if err := c.Verify(); !errors.Is(err, ledger.ErrProof) {
			t.Fatalf("%d -> 25 with another old root: %v", from, err)
		}
	}
}

// The publisher signs the tree as it is, once per tree head, keeps the latest in
// its file, and a new publisher over the same file starts from it.
func TestPublisherSignsOncePerHead(t *testing.T) {
	dir := t.TempDir()
	k, _ := ledger.LoadKey(dir, "")
	head := projector.TreeHead{Size: 1, Root: tlog.RecordHash([]byte("a"))}
	src := func() (projector.TreeHead, error) { return head, nil }
	p := ledger.NewPublisher(k, "", src, ledger.CheckpointPath(dir), nil)
	if _, ok := p.Latest(); ok {
		t.Fatal("a checkpoint before any was signed")
	}
	s1, err := p.Publish()
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := p.Publish()
	if string(s1.Note) != string(s2.Note) {
		t.Fatal("the same head signed twice")
	}
	head = projector.TreeHead{Size: 2, Root: tlog.RecordHash([]byte("b"))}
	s3, _ := p.Publish()
	if s3.Size != 2 {
		t.Fatalf("latest %+v", s3)
	}
	b, err := os.ReadFile(filepath.Join(ledger.Dir(dir), "checkpoint"))
	if err != nil || string(b) != string(s3.Note) {
		t.Fatalf("checkpoint file %q %v", b, err)
	}
	again, ok := ledger.NewPublisher(k, "", src, ledger.CheckpointPath(dir), nil).Latest()
	if !ok || again.Size != 2 {
		t.Fatalf("a new publisher's latest: %+v %v", again, ok)
	}
}
