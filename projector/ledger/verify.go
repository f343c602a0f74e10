package ledger

import (
	"fmt"

	"github.com/capdir/capdir/projector"
	"golang.org/x/mod/sumdb/tlog"
)

// Copy is one copy of the ledger's leaves: the leaf hashes in order, the
// invocation id of each leaf's receipt, and why a leaf could not be read (its
// hash is then the zero hash).
type Copy struct {
	Name   string // says where the copy comes from, in a Failure
	Hashes []tlog.Hash
	IDs    []string
	Errs   map[int64]error
}

// Copies reads the two copies of the ledger a projection file holds: the leaves
// hashed again from its receipts' data ("the projection's receipt"), and the leaf
// hashes its stored tree keeps ("the projection's stored tree"). name says
// which projection it is ("the projection", "the log").
func Copies(f *projector.LedgerFile, name string) (receipts, tree Copy, err error) {
	receipts = Copy{Name: name + "'s copy", Errs: map[int64]error{}}
	tree = Copy{Name: name + "'s stored tree", Errs: map[int64]error{}}
	err = f.Leaves(func(l projector.Leaf) error {
		add := func(c *Copy, h tlog.Hash) {
			c.Hashes, c.IDs = append(c.Hashes, h), append(c.IDs, l.InvocationID)
			if l.Err != nil {
				c.Errs[l.Index] = l.Err
			}
		}
		var rh tlog.Hash
		if l.Err == nil {
			rh = tlog.RecordHash(l.Data)
		}
		add(&receipts, rh)
		add(&tree, l.Hash)
		return nil
	})
	return receipts, tree, err
}

// Report is what Check found.
type Report struct {
	Checked   int64  // leaves compared, within the range asked
	Trusted   string // the copy whose root is the checkpoint's
	Uncovered int64  // leaves beyond the checkpoint's size, not checked
}

// Check compares the copies with a signed checkpoint over the leaves from index
// from to index to (to < 0: to the checkpoint's size). A copy whose first cp.Size
// leaves hash to cp.Root is trusted; the first leaf in the range where another
// copy differs from it is a *Failure naming its receipt. With no copy matching,
// the first leaf where copies disagree is a *Failure; when they all agree,
// ErrNoCopyMatches.
func Check(cp Checkpoint, from, to int64, copies ...Copy) (Report, error) {
	if to < 0 || to > cp.Size {
		to = cp.Size
	}
	var rep Report
	for _, c := range copies {
		if n := int64(len(c.Hashes)) - cp.Size; n > rep.Uncovered {
			rep.Uncovered = n
		}
	}
	trusted := -1
	for i, c := range copies {
		if int64(len(c.Hashes)) >= cp.Size && rootOf(c.Hashes[:cp.Size]) == cp.Root {
			trusted = i
			break
		}
	}
	if trusted < 0 {
		if f := firstDisagreement(from, to, copies); f != nil {
			f.Reason = "differs from another copy, and no copy matches the signed checkpoint (" + f.Reason + ")"
			return rep, f
		}
		return rep, fmt.Errorf("%w (size %d): the checkpoint is of another log, or every copy was changed alike", ErrNoCopyMatches, cp.Size)
	}
	rep.Trusted = copies[trusted].Name
	t := copies[trusted]
	for i := from; i < to; i++ {
		for _, c := range copies {
			if reason := leafDiffers(&c, i, t.Hashes[i]); reason != "" {
				return rep, &Failure{Index: i, InvocationID: t.IDs[i], Copy: c.Name, Reason: reason}
			}
		}
		rep.Checked++
	}
	return rep, nil
}

// leafDiffers says how copy c's leaf i differs from want, "" when it does not.
func leafDiffers(c *Copy, i int64, want tlog.Hash) string {
	switch {
	case i >= int64(len(c.Hashes)):
		return fmt.Sprintf("ends at %d receipts", len(c.Hashes))
	case c.Errs[i] != nil:
		return fmt.Sprintf("cannot be read: %v", c.Errs[i])
	case c.Hashes[i] != want:
		return "does not hash to the leaf the signed checkpoint holds"
	}
	return ""
}

func firstDisagreement(from, to int64, copies []Copy) *Failure {
	for i := from; i < to; i++ {
		for _, a := range copies {
			for _, b := range copies {
				var want tlog.Hash
				if i < int64(len(a.Hashes)) {
					want = a.Hashes[i]
				}
				if reason := leafDiffers(&b, i, want); reason != "" {
					id := ""
					if i < int64(len(a.IDs)) {
						id = a.IDs[i]
					}
					return &Failure{Index: i, InvocationID: id, Copy: b.Name, Reason: reason + " of " + a.Name}
				}
			}
		}
	}
	return nil
}

// rootOf is the RFC 6962 root of the leaf hashes hs, through tlog's own stored
// hashes, in memory.
func rootOf(hs []tlog.Hash) tlog.Hash {
	stored := make([]tlog.Hash, 0, 2*len(hs))
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
			panic(err) // every hash it reads was stored above
		}
		stored = append(stored, s...)
	}
	root, err := tlog.TreeHash(int64(len(hs)), r)
	if err != nil {
		panic(err)
	}
	return root
}
