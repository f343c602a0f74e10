package ledger_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/capdir/capdir/projector/ledger"
	"golang.org/x/mod/sumdb/tlog"
)

// A node signs a checkpoint of its tree; anyone with its public key opens the
// checkpoint and checks a receipt's inclusion proof against it. Another key's
// checkpoint is refused.
func Example() {
	dir, _ := os.MkdirTemp("", "ledger-example")
	defer os.RemoveAll(dir)
	key, _ := ledger.LoadKey(dir, "example.org/capdir")

	// Three receipts' data, as the log holds them, and the tree tlog stores for them.
	var stored []tlog.Hash
	hashes := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = stored[x]
		}
		return out, nil
	})
	receipts := [][]byte{[]byte(`{"invocation_id":"inv_1"}`), []byte(`{"invocation_id":"inv_2"}`), []byte(`{"invocation_id":"inv_3"}`)}
	for i, r := range receipts {
		hs, _ := tlog.StoredHashes(int64(i), r, hashes)
		stored = append(stored, hs...)
	}
	root, _ := tlog.TreeHash(3, hashes)
	signed, _ := key.Sign(ledger.Checkpoint{Origin: "example.org/capdir", Size: 3, Root: root})

	// The verifier has the public key only (/.well-known/capdir-keys).
	keys, _ := ledger.ParseKeys([]byte(key.VerifierKey()))
	proof, _ := tlog.ProveRecord(3, 1, hashes)
	in := ledger.Inclusion{LeafIndex: 1, LeafHash: tlog.RecordHash(receipts[1]), TreeSize: 3, Proof: proof, Checkpoint: string(signed)}
	cp, err := in.Verify(keys)
	fmt.Println(cp.Origin, cp.Size, err)

	stranger, _ := ledger.LoadKey(dir+"/other", "example.org/capdir")
	forged, _ := stranger.Sign(ledger.Checkpoint{Origin: "example.org/capdir", Size: 3, Root: root})
	_, err = ledger.OpenCheckpoint(forged, keys)
	fmt.Println(errors.Is(err, ledger.ErrCheckpoint))
	// Output:
	// example.org/capdir 3 <nil>
	// true
}
