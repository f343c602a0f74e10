//go:build unix

package keyfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/keyfile"
)

// A key file another user owns is refused, naming the chown, even at mode 0600:
// that user may change the key. Root's and the reader's own are read.
func TestReadRefusesAFileAnotherUserOwns(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("giving a file to another user needs root")
	}
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := keyfile.Read(path, 16); err != nil {
		t.Fatalf("root's own file: %v", err)
	}
	if err := os.Chown(path, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	var owner *keyfile.OwnerError
	if _, err := keyfile.Read(path, 16); !errors.As(err, &owner) || owner.UID != 4242 || !strings.Contains(err.Error(), "chown 0 "+path) {
		t.Fatalf("a file uid 4242 owns: %v; want an *OwnerError naming the chown", err)
	}
}
