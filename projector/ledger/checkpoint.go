package ledger

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/capdir/capdir/projector"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Checkpoint is a signed tree head: the log's origin, the tree's size and its
// root hash.
type Checkpoint struct {
	Origin string
	Size   int64
	Root   tlog.Hash
}

// Text is the checkpoint's text as signed: the origin, the size in decimal and
// the root hash in standard base64, one a line (the C2SP tlog-checkpoint body).
func (c Checkpoint) Text() string {
	return fmt.Sprintf("%s\n%d\n%s\n", c.Origin, c.Size, base64.StdEncoding.EncodeToString(c.Root[:]))
}

// Head is the checkpoint's size and root.
func (c Checkpoint) Head() projector.TreeHead { return projector.TreeHead{Size: c.Size, Root: c.Root} }

// ParseCheckpoint reads a checkpoint's text (Text's form; lines after the third
// are extensions and ignored).
func ParseCheckpoint(text string) (Checkpoint, error) {
	lines := strings.SplitN(text, "\n", 4)
	if len(lines) < 4 || lines[0] == "" {
		return Checkpoint{}, checkpointError("the text is not a checkpoint (origin, size, root hash, one a line)")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != lines[1] {
		return Checkpoint{}, checkpointError("the size %q is not a decimal tree size", lines[1])
	}
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != tlog.HashSize {
		return Checkpoint{}, checkpointError("the root hash %q is not 32 bytes of base64", lines[2])
	}
	c := Checkpoint{Origin: lines[0], Size: size}
	copy(c.Root[:], root)
	return c, nil
}

// OpenCheckpoint checks a signed checkpoint against the verifier keys known and
// returns it: ErrCheckpoint when it is not a note, no known key signed it, a
// signature is bad, or its text is not a checkpoint.
func OpenCheckpoint(msg []byte, known note.Verifiers) (Checkpoint, error) {
	n, err := note.Open(msg, known)
	var unverified *note.UnverifiedNoteError
	var invalid *note.InvalidSignatureError
	switch {
	case errors.As(err, &unverified):
		return Checkpoint{}, checkpointError("it is not signed by any of the public keys given (signed by %s)", signers(unverified.Note))
	case errors.As(err, &invalid):
		return Checkpoint{}, checkpointError("the signature of %s does not verify: the checkpoint was changed after it was signed", invalid.Name)
	case err != nil:
		return Checkpoint{}, checkpointError("it is not a signed note (text, a blank line, signature lines): %v", err)
	}
	return ParseCheckpoint(n.Text)
}

func signers(n *note.Note) string {
	if n == nil || len(n.UnverifiedSigs) == 0 {
		return "nobody"
	}
	var names []string
	for _, s := range n.UnverifiedSigs {
		names = append(names, fmt.Sprintf("%s (key hash %08x)", s.Name, s.Hash))
	}
	return strings.Join(names, ", ")
}

// sign signs c with signer as a note.
func sign(c Checkpoint, signer note.Signer) ([]byte, error) {
	msg, err := note.Sign(&note.Note{Text: c.Text()}, signer)
	if err != nil {
		return nil, fmt.Errorf("ledger: sign checkpoint: %w", err)
	}
	return msg, nil
}

// trimNote drops what a file or a shell adds after a note (nothing may follow
// its last signature line).
func trimNote(b []byte) []byte { return append(bytes.TrimRight(b, "\n \r\t"), '\n') }
