package projector_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// modelWrite is one write the model folds: the row after it, nil for a delete.
type modelWrite struct {
	seq uint64
	at  time.Time
	key string
	row *contract.Row
}

// appendRandomWrites appends n random creates, replaces, patches and deletes over
// keys keys, and some events the fold skips (a row under another key's subject),
// and returns the writes the fold applies, in log order.
func appendRandomWrites(t testing.TB, l *eventlog.Log, n, keys int, seed uint64) []modelWrite {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed))
	live := map[string]*contract.Row{}
	var out []modelWrite
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("K%02d", rng.IntN(keys))
		at := t0.Add(time.Duration(i) * time.Second)
		var m contract.DirectoryMutation
		switch prev := live[key]; {
		case prev != nil && rng.IntN(5) == 0:
			m = contract.DirectoryMutation{Action: contract.ActionDelete, Key: key}
		case rng.IntN(20) == 0:
			// Skipped by the fold: the row names another key than its subject.
			r := contract.Row{Key: key + "X", Type: "fn", Target: "echo", Enabled: 1}
			appendEv(t, l, wire.DirectorySubject(key), at, wire.TypeDirectoryMutate, contract.DirectoryMutation{Action: contract.ActionCreate, Key: key, Row: &r})
			continue
		default:
			r := contract.Row{Key: key, Type: "fn", Target: "echo", Enabled: 1, UpdatedAt: contract.FormatTime(at), CreatedAt: contract.FormatTime(t0)}
			if prev != nil {
				r = *prev
				r.UpdatedAt = contract.FormatTime(at)
			}
			action := contract.ActionCreate
			if prev != nil {
				action = []string{contract.ActionReplace, contract.ActionPatch}[rng.IntN(2)]
			}
			switch rng.IntN(4) {
			case 0:
				r.Content = fmt.Sprintf("# WHAT: version %d", i) // the contract changes
			case 1:
				r.Category = fmt.Sprintf("cat%d", rng.IntN(3))
			case 2:
				s := int64(rng.IntN(10))
				r.Seq = &s
			case 3:
				r.Examples = fmt.Sprintf("example %d", i) // documentation only
			}
			m = contract.DirectoryMutation{Action: action, Key: key, Row: &r}
		}
		seq := appendEv(t, l, wire.DirectorySubject(key), at, wire.TypeDirectoryMutate, m)
		live[key] = m.Row
		out = append(out, modelWrite{seq: seq, at: at, key: key, row: m.Row})
	}
	return out
}

// modelAt is the directory the writes up to seq fold to.
func modelAt(writes []modelWrite, seq uint64) map[string]contract.Row {
	dir := map[string]contract.Row{}
	for _, w := range writes {
		if w.seq > seq {
			break
		}
		if w.row == nil {
			delete(dir, w.key)
		} else {
			dir[w.key] = *w.row
		}
	}
	return dir
}

func snapshotRows(t *testing.T, s *projector.Snapshot) map[string]contract.Row {
	t.Helper()
	got := map[string]contract.Row{}
	prev := 0
	err := s.Each(projector.Filter{}, func(r *contract.Row) error {
		if r.RowNum != prev+1 {
			return fmt.Errorf("%s has row_num %d after %d", r.Key, r.RowNum, prev)
		}
		prev = r.RowNum
		c := *r
		c.RowNum = 0
		got[r.Key] = c
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestDirectoryAtMatchesModel(t *testing.T) {
	l := logtest.Open(t, "")
	writes := appendRandomWrites(t, l, 2000, 30, 25)
	p := open(t, filepath.Join(t.TempDir(), "p.db"), l)
	ctx := context.Background()
	last := writes[len(writes)-1].seq
	for seq := uint64(10); seq <= last; seq += 10 {
		snap, err := p.DirectoryAt(ctx, projector.Point{Seq: seq})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := snapshotRows(t, snap), modelAt(writes, seq); !reflect.DeepEqual(got, want) {
			t.Fatalf("directory at %d: %d rows, want %d (%v against %v)", seq, len(got), len(want), got, want)
		}
	}
	// By time: the writes appended at or before it.
	mid := writes[len(writes)/2]
	snap, err := p.DirectoryAt(ctx, projector.Point{Time: mid.at})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := snapshotRows(t, snap), modelAt(writes, mid.seq); !reflect.DeepEqual(got, want) {
		t.Fatalf("directory at %s: %d rows, want %d", mid.at, len(got), len(want))
	}
	// At the end, the rewind is the live projection.
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	end, err := p.DirectoryAt(ctx, projector.Point{})
	if err != nil {
		t.Fatal(err)
	}
	liveRows, total, err := p.List(projector.Filter{}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	endRows, endTotal, err := end.List(projector.Filter{}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if total != endTotal || !reflect.DeepEqual(liveRows, endRows) {
		t.Fatalf("rewind to the end: %d rows %v, live projection %d rows %v", endTotal, endRows, total, liveRows)
	}
	var beyond *projector.BeyondLogError
	if _, err := p.DirectoryAt(ctx, projector.Point{Seq: last + 1}); !errors.As(err, &beyond) || beyond.LastSeq != last {
		t.Fatalf("beyond the log: %v", err)
	}
}

func TestHistoryMatchesModel(t *testing.T) {
	l := logtest.Open(t, "")
	writes := appendRandomWrites(t, l, 1500, 12, 7)
	p := open(t, filepath.Join(t.TempDir(), "p.db"), l)
	ctx := context.Background()
	for k := 0; k < 12; k++ {
		key := fmt.Sprintf("K%02d", k)
		h, err := p.History(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		var want []modelWrite
		for _, w := range writes {
			if w.key == key {
				want = append(want, w)
			}
		}
		if len(h) != len(want) {
			t.Fatalf("%s: %d changes, want %d", key, len(h), len(want))
		}
		var prev *contract.Row
		for i, c := range h {
			w := want[i]
			if c.Seq != w.seq || !c.At.Equal(w.at) || c.Actor != "test" || !reflect.DeepEqual(c.Row, w.row) {
				t.Fatalf("%s change %d = %+v, want seq %d row %+v", key, i, c, w.seq, w.row)
			}
			if (w.row == nil) != (c.Action == contract.ActionDelete) {
				t.Fatalf("%s change %d: action %s for row %v", key, i, c.Action, w.row)
			}
			oldFP, newFP := "", ""
			if prev != nil {
				oldFP = contract.Fingerprint(prev)
			}
			if w.row != nil {
				newFP = contract.Fingerprint(w.row)
			}
			if c.Fingerprint != newFP || c.ContractChanged != (oldFP != newFP) {
				t.Fatalf("%s change %d: fingerprint %s changed=%v, want %s changed=%v", key, i, c.Fingerprint, c.ContractChanged, newFP, oldFP != newFP)
			}
			if !fieldsCover(c.Fields, prev, w.row) {
				t.Fatalf("%s change %d: fields %+v do not say what changed between %+v and %+v", key, i, c.Fields, prev, w.row)
			}
			prev = w.row
			if i%10 != 0 {
				continue
			}
			// The row at the change's sequence is the change's row.
			r, seq, err := p.RowAt(ctx, key, projector.Point{Seq: c.Seq})
			switch {
			case w.row == nil && !errors.Is(err, projector.ErrNotFound):
				t.Fatalf("%s at %d: deleted, got %v", key, c.Seq, err)
			case w.row != nil && (err != nil || seq != c.Seq || !reflect.DeepEqual(&r, w.row)):
				t.Fatalf("%s at %d: %+v seq %d %v", key, c.Seq, r, seq, err)
			}
		}
	}
	// A receipt's contract: the row at its contract_seq, or for a receipt that
	// does not record it, the row's last mutation before the call started.
	for i := 0; i < len(writes); i += 97 {
		w := writes[i]
		for _, rc := range []wire.Receipt{
			{ReceiptSummary: wire.ReceiptSummary{Key: w.key, StartedAt: w.at.Add(time.Hour)}, ContractSeq: w.seq},
			{ReceiptSummary: wire.ReceiptSummary{Key: w.key, StartedAt: w.at.Add(500 * time.Millisecond)}},
		} {
			r, seq, err := p.ContractOf(ctx, &rc)
			switch {
			case w.row == nil && !errors.Is(err, projector.ErrNotFound):
				t.Fatalf("contract of a call after %s was deleted: %+v %v", w.key, r, err)
			case w.row != nil && (err != nil || seq != w.seq || contract.Fingerprint(&r) != contract.Fingerprint(w.row)):
				t.Fatalf("contract of %+v: %+v seq %d %v; want the row written at %d", rc, r, seq, err, w.seq)
			}
		}
	}
	if h, err := p.History(ctx, "NEVER_WRITTEN"); err != nil || len(h) != 0 {
		t.Fatalf("a key never written: %v %v", h, err)
	}
}

// fieldsCover reports whether fields turn a into b: a's fields with each change's
// new value set (removed when null) are b's, and each old value is a's.
func fieldsCover(fields []contract.FieldChange, a, b *contract.Row) bool {
	am, bm := jsonFields(a), jsonFields(b)
	for _, f := range fields {
		old, _ := json.Marshal(f.Old)
		if f.Old == nil && am[f.Field] != "" || f.Old != nil && string(old) != am[f.Field] {
			return false
		}
		if f.New == nil {
			delete(am, f.Field)
			continue
		}
		nb, _ := json.Marshal(f.New)
		am[f.Field] = string(nb)
	}
	return reflect.DeepEqual(am, bm)
}

func jsonFields(r *contract.Row) map[string]string {
	out := map[string]string{}
	if r == nil {
		return out
	}
	var m map[string]json.RawMessage
	b, _ := json.Marshal(r)
	json.Unmarshal(b, &m)
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}
