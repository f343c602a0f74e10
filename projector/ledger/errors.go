package ledger

import (
	"errors"
	"fmt"
)

var (
	// ErrCheckpoint is matched by every refusal of a signed checkpoint: not a
	// note, signed by no key given, a bad signature, or text not a checkpoint.
	ErrCheckpoint = errors.New("ledger: checkpoint refused")
	// ErrProof is matched when an inclusion or consistency proof does not check.
	ErrProof = errors.New("ledger: proof does not verify")
	// ErrKeys is matched when a keys file holds no verifier key.
	ErrKeys = errors.New("ledger: no public key")
	// ErrNoCopyMatches is returned by Check when no copy of the ledger has the
	// checkpoint's root and the copies agree on every leaf, so none can be named.
	ErrNoCopyMatches = errors.New("ledger: no copy of the ledger matches the signed checkpoint")
)

func checkpointError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCheckpoint, fmt.Sprintf(format, args...))
}

// Failure names the first receipt that does not verify. It is Check's error.
type Failure struct {
	Index        int64  // the receipt's leaf index
	InvocationID string // its invocation id ("" when no copy names it)
	Copy         string // the copy whose leaf differs
	Reason       string
}

func (f *Failure) Error() string {
	id := f.InvocationID
	if id == "" {
		id = "(unnamed)"
	}
	return fmt.Sprintf("receipt %s (leaf %d) does not verify: %s %s", id, f.Index, f.Copy, f.Reason)
}

// Is makes a Failure match ErrProof.
func (f *Failure) Is(target error) bool { return target == ErrProof }
