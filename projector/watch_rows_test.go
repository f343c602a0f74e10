package projector_test

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
)

// rowLog records what a WatchRows watcher is given: the content of each row, or
// "<deleted>".
type rowLog struct {
	mu  sync.Mutex
	got []string
}

func (r *rowLog) watch(key string, row *contract.Row) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if row == nil {
		r.got = append(r.got, key+"=<deleted>")
		return
	}
	if row.Key != key {
		r.got = append(r.got, key+"=<row of "+row.Key+">")
		return
	}
	r.got = append(r.got, key+"="+row.Content)
}

func (r *rowLog) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.got
	r.got = nil
	return out
}

func TestWatchRowsSnapshotThenChanges(t *testing.T) {
	l := logtest.Open(t, "")
	put := func(action, key, content string) {
		row := contract.Row{Key: key, Type: "fn", Target: "echo", Content: content, Enabled: 1}
		appendEv(t, l, wire.DirectorySubject(key), t0, wire.TypeDirectoryMutate,
			contract.DirectoryMutation{Action: action, Key: key, Row: &row})
	}
	put(contract.ActionCreate, "A", "# WHAT: a")
	put(contract.ActionCreate, "B", "# WHAT: b")
	p := open(t, filepath.Join(t.TempDir(), "p.db"), l)
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}

	var rl rowLog
	if err := p.WatchRows(rl.watch); err != nil {
		t.Fatal(err)
	}
	if got := rl.take(); len(got) != 2 || got[0] != "A=# WHAT: a" || got[1] != "B=# WHAT: b" {
		t.Fatalf("snapshot = %q, want both rows with their content", got)
	}

	put(contract.ActionPatch, "A", "# WHAT: a again")
	appendEv(t, l, wire.DirectorySubject("B"), t0, wire.TypeDirectoryMutate,
		contract.DirectoryMutation{Action: contract.ActionDelete, Key: "B"})
	put(contract.ActionCreate, "C", "# WHAT: c")
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	want := []string{"A=# WHAT: a again", "B=<deleted>", "C=# WHAT: c"}
	if got := rl.take(); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("changes = %q, want %q", got, want)
	}
}
