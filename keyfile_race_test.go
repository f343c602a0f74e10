package capdir_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/capdir/capdir"
)

// Nodes (or capdir commands) starting on one data dir at once agree on one owner
// key: exactly one of them generates it, and every other reads the whole key,
// never an empty or a partial file. No temporary file is left behind.
func TestTerminalKeyConcurrentCreatorsAgree(t *testing.T) {
	const rounds, creators = 200, 8
	for range rounds {
		dir := t.TempDir()
		keys := make([]string, creators)
		created := make([]bool, creators)
		errs := make([]error, creators)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range creators {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				keys[i], _, created[i], errs[i] = capdir.TerminalKey("", dir)
			}()
		}
		close(start)
		wg.Wait()
		n := 0
		for i := range creators {
			if errs[i] != nil || len(keys[i]) != 64 || keys[i] != keys[0] {
				t.Fatalf("creator %d: key %q, %v; want the one key %q every creator has", i, keys[i], errs[i], keys[0])
			}
			if created[i] {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d creators say they generated the key; want 1", n)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].Name() != filepath.Base(capdir.KeyPath(dir)) {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Fatalf("the data dir holds %s; want terminal.key alone", strings.Join(names, ", "))
		}
	}
}

// An empty terminal.key (a key file cut short, or made by hand) is refused,
// naming the file and what to do, not taken as an empty owner key; nothing
// replaces it.
func TestTerminalKeyRefusesAnEmptyFile(t *testing.T) {
	dir := t.TempDir()
	path := capdir.KeyPath(dir)
	if err := os.WriteFile(path, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	key, _, created, err := capdir.TerminalKey("", dir)
	if err == nil || key != "" || created || !strings.Contains(err.Error(), path+" is empty") {
		t.Fatalf("an empty terminal.key: %q created=%v %v; want it refused naming the file", key, created, err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "\n" {
		t.Fatalf("the empty file was replaced: %q %v", b, err)
	}
}
