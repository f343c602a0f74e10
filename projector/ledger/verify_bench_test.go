package ledger_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
	"github.com/capdir/capdir/projector/ledger"
	"golang.org/x/mod/sumdb/note"
)

// ledgerFile folds n receipts into a projection file and signs a checkpoint of
// its tree; it returns the file's path, the checkpoint and its verifiers.
func ledgerFile(b *testing.B, n int) (string, ledger.Checkpoint, []byte, note.Verifiers) {
	b.Helper()
	l := logtest.Open(b, "")
	ctx := context.Background()
	for i := range n {
		key := fmt.Sprintf("K%03d", i%100)
		inv := fmt.Sprintf("inv_%07d", i)
		rc := wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: inv, Key: key, OK: true, Ran: true, Status: wire.StatusProvenMaterialResult,
			Fingerprints: wire.Fingerprints{Input: inv, Output: inv, Contract: key}}, Result: "a result of some forty bytes, for " + inv, BreakerKind: "not_counted"}
		ev, err := l.NewEvent(wire.TypeReceipt, "test", rc)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := l.Append(ctx, wire.ReceiptSubject(key), ev); err != nil {
			b.Fatal(err)
		}
	}
	path := filepath.Join(b.TempDir(), "p.db")
	if err := projector.Rebuild(ctx, projector.Config{Path: path, Log: l}, nil); err != nil {
		b.Fatal(err)
	}
	f, err := projector.OpenLedgerFile(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	head, err := f.Head()
	if err != nil || head.Size != int64(n) {
		b.Fatalf("head %+v %v, want %d receipts", head, err, n)
	}
	k, _ := ledger.LoadKey(b.TempDir(), "")
	cp := ledger.Checkpoint{Origin: "capdir", Size: head.Size, Root: head.Root}
	msg, _ := k.Sign(cp)
	return path, cp, msg, verifiers(b, k)
}

// BenchmarkVerifyReceipts is capdir verify's work over a projection of N
// receipts (check): reading every leaf, hashing every receipt again, the roots of
// both copies and the comparison, reported per receipt; and one public
// receipt's check (inclusion): the checkpoint's signature and tlog.CheckRecord.
// N is 1k and 10k; CAPDIR_BENCH_LEDGER=full adds 100k.
func BenchmarkVerifyReceipts(b *testing.B) {
	sizes := []int{1_000, 10_000}
	if os.Getenv("CAPDIR_BENCH_LEDGER") == "full" {
		sizes = append(sizes, 100_000)
	}
	for _, n := range sizes {
		path, cp, msg, keys := ledgerFile(b, n)
		b.Run(fmt.Sprintf("check/N=%d", n), func(b *testing.B) {
			for range b.N {
				f, err := projector.OpenLedgerFile(path)
				if err != nil {
					b.Fatal(err)
				}
				receipts, tree, err := ledger.Copies(f, "the projection")
				f.Close()
				if err != nil {
					b.Fatal(err)
				}
				if rep, err := ledger.Check(cp, 0, -1, receipts, tree); err != nil || rep.Checked != int64(n) {
					b.Fatalf("check: %+v %v", rep, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/receipt")
		})
		b.Run(fmt.Sprintf("inclusion/N=%d", n), func(b *testing.B) {
			p, err := projector.Open(projector.Config{Path: path})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			var ins []ledger.Inclusion
			for i := range int64(64) {
				leaf, err := p.LedgerLeaf(fmt.Sprintf("inv_%07d", i*int64(n)/64))
				if err != nil {
					b.Fatal(err)
				}
				proof, err := p.InclusionProof(leaf.Index, cp.Size)
				if err != nil {
					b.Fatal(err)
				}
				ins = append(ins, ledger.Inclusion{LeafIndex: leaf.Index, LeafHash: leaf.Hash, TreeSize: cp.Size, Proof: proof, Checkpoint: string(msg)})
			}
			b.ResetTimer()
			for i := range b.N {
				if _, err := ins[i%len(ins)].Verify(keys); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
