package projector_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/projector"
	"golang.org/x/mod/sumdb/tlog"
)

// A batch adds its receipts to the ledger at once, the tree's size read and
// written once and the hashes it stored kept at hand: whatever the batch size,
// from one event a transaction to all of them in one, every tree the ledger
// passes through is RFC 6962's of the receipts so far, and the file digests as
// its replay does.
func TestLedgerIsTheSameInBatchesOfAnySize(t *testing.T) {
	l := logtest.Open(t, "")
	appendMix(t, l, 45)
	_, data := logReceipts(t, l)
	for _, size := range []int{1, 2, 3, 7, 16, 1024} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			p, err := projector.Open(projector.Config{Path: filepath.Join(t.TempDir(), "p.db"), Log: l, Settings: projector.Settings{BatchSize: size}})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if err := p.CatchUp(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			head, err := p.LedgerHead()
			if err != nil || head.Size != int64(len(data)) || head.Root != tlog.Hash(mth(data)) {
				t.Fatalf("head %+v %v, want %d leaves with RFC 6962's root", head, err, len(data))
			}
			for n := int64(1); n <= head.Size; n++ {
				if h, err := p.LedgerTreeHash(n); err != nil || h != tlog.Hash(mth(data[:n])) {
					t.Fatalf("tree of %d leaves: %s %v, want RFC 6962's", n, h, err)
				}
			}
			assertReplayDigest(t, l, p)
		})
	}
}
