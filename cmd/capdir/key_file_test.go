//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capdir/capdir/internal/keyfile/keyfiletest"
	"github.com/capdir/capdir/internal/nodetest"
)

// The CLI reads --key-file as the node reads terminal.key: a file its group or
// others may read is refused saying chmod 600 FILE, and a FIFO, a link to
// /dev/zero, a directory or a file of 1 GiB is refused at once, naming it; the key
// is never in the refusal, and no request is sent (the server is unreachable).
func TestCLIKeyFileRefusedUnlessPrivateAndRegular(t *testing.T) {
	t.Setenv("CAPDIR_TERMINAL_KEY", "")
	dir := t.TempDir()
	cases := keyfiletest.SpecialFiles(t, dir)
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604} {
		loose := filepath.Join(dir, "loose"+mode.String()+".key")
		if err := os.WriteFile(loose, []byte(nodetest.Key+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(loose, mode); err != nil {
			t.Fatal(err)
		}
		cases[loose] = "chmod 600 " + loose
	}
	for path, says := range cases {
		_, stderr, err := runCLI(t, "", "breaker", "list", "--server", "http://127.0.0.1:1", "--key-file", path)
		if err == nil || !strings.Contains(err.Error(), "--key-file "+path) || !strings.Contains(err.Error(), says) ||
			strings.Contains(err.Error()+stderr, nodetest.Key) || strings.Contains(err.Error(), "127.0.0.1:1") {
			t.Errorf("--key-file %s: %v; want it refused before any request, saying %q", filepath.Base(path), err, says)
		}
	}
}
