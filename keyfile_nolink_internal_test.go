package capdir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// withoutHardLinks makes writeNewKeyFile's link fail as on a filesystem without
// hard links, for t.
func withoutHardLinks(t *testing.T) {
	t.Cleanup(func() { linkFile = os.Link })
	linkFile = func(oldname, newname string) error {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: syscall.EPERM}
	}
}

// onlyTheKey fails t unless dir holds terminal.key alone, mode 0600.
func onlyTheKey(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != filepath.Base(KeyPath(dir)) {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("the data dir holds %s; want terminal.key alone", strings.Join(names, ", "))
	}
	if st, err := os.Stat(KeyPath(dir)); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("terminal.key: %v %v; want mode 0600", st, err)
	}
}

// On a filesystem without hard links the first start still creates the owner
// key (an exclusive create, the key renamed over it): mode 0600, no temporary
// file left, read back the same; starts at once agree on one key, exactly one
// generating it; a dangling link in its place is not written through.
func TestTerminalKeyWithoutHardLinks(t *testing.T) {
	withoutHardLinks(t)
	dir := t.TempDir()
	key, _, created, err := TerminalKey("", dir)
	if err != nil || !created || len(key) != 64 {
		t.Fatalf("first start without hard links: %q created=%v %v", key, created, err)
	}
	onlyTheKey(t, dir)
	if again, _, created, err := TerminalKey("", dir); err != nil || created || again != key {
		t.Fatalf("second start: %q created=%v %v; want %q", again, created, err, key)
	}

	const rounds, creators = 50, 8
	for range rounds {
		dir := t.TempDir()
		keys, made, errs := make([]string, creators), make([]bool, creators), make([]error, creators)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range creators {
			wg.Go(func() {
				<-start
				keys[i], _, made[i], errs[i] = TerminalKey("", dir)
			})
		}
		close(start)
		wg.Wait()
		n := 0
		for i := range creators {
			if errs[i] != nil || len(keys[i]) != 64 || keys[i] != keys[0] {
				t.Fatalf("creator %d: key %q, %v; want the one key %q every creator has", i, keys[i], errs[i], keys[0])
			}
			if made[i] {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d creators say they generated the key; want 1", n)
		}
		onlyTheKey(t, dir)
	}

	dir, elsewhere := t.TempDir(), filepath.Join(t.TempDir(), "planted")
	if err := os.Symlink(elsewhere, KeyPath(dir)); err != nil {
		t.Fatal(err)
	}
	if key, _, created, err := TerminalKey("", dir); err == nil || created || key != "" {
		t.Fatalf("a dangling link as terminal.key: %q created=%v %v; want it refused", key, created, err)
	}
	if _, err := os.Lstat(elsewhere); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the key was written through the link to %s: %v", elsewhere, err)
	}
}

// A start that finds terminal.key empty, as another start creating it without
// hard links leaves it until the key is renamed into place, waits for the key
// and takes it; one that finds it empty still after its waits refuses it,
// naming the file.
func TestTerminalKeyWaitsForAKeyBeingCreated(t *testing.T) {
	t.Cleanup(func() { keyFileWait = sleepKeyFileWait })
	dir := t.TempDir()
	path := KeyPath(dir)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	const theirs = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	waits := 0
	keyFileWait = func() {
		waits++
		if waits == 3 { // the other start renames its key over the empty file
			tmp := path + ".theirs"
			if err := os.WriteFile(tmp, []byte(theirs+"\n"), 0o600); err != nil {
				t.Error(err)
			}
			if err := os.Rename(tmp, path); err != nil {
				t.Error(err)
			}
		}
	}
	key, _, created, err := TerminalKey("", dir)
	if err != nil || created || key != theirs {
		t.Fatalf("a start finding terminal.key being created: %q created=%v %v; want the other start's key", key, created, err)
	}

	dir = t.TempDir()
	path = KeyPath(dir)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waits = 0
	keyFileWait = func() { waits++ }
	key, _, created, err = TerminalKey("", dir)
	if err == nil || key != "" || created || !strings.Contains(err.Error(), path+" is empty") || waits != keyFileWaits {
		t.Fatalf("terminal.key left empty: %q created=%v %v after %d waits; want it refused naming the file after %d", key, created, err, waits, keyFileWaits)
	}
}
