package ledger

import (
	"errors"
	"fmt"
	"strings"
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

// notAVerifierKey refuses a line of a keys file that is no verifier key. A
// private signing key (the data dir's ledger/key) is never quoted: the error
// says only what it is; any other line is quoted clipped.
func notAVerifierKey(line string, err error) error {
	if strings.HasPrefix(line, "PRIVATE+KEY+") {
		return fmt.Errorf("%w: the keys file holds a private signing key (the data dir's ledger/key), not a public one: "+
			"give the public keys, the JSON of GET /.well-known/capdir-keys; keep the private key where it is", ErrKeys)
	}
	if len(line) > 80 {
		line = line[:80] + "…"
	}
	return fmt.Errorf("%w: %q is not a note verifier key (name+hash+base64): %v", ErrKeys, line, err)
}

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
