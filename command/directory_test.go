package command_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/capdir/capdir/command"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/internal/nodetest"
)

func fields(t testing.TB, body string) contract.Fields {
	t.Helper()
	f, err := contract.DecodeFields([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The directory's write path without HTTP: each write returns what it did, or a
// typed error naming the key; every accepted write is readable when it returns, and
// a refused one appends nothing.
func TestDirectoryWritePath(t *testing.T) {
	n := nodetest.Start(t, nil)
	d := n.Directory()
	ctx := context.Background()
	readable := func(key string, res command.WriteResult) {
		t.Helper()
		row, seq, err := n.Projector().Row(key)
		if res.Row == nil {
			if err == nil {
				t.Fatalf("%s still readable after %s", key, res.Action)
			}
			return
		}
		if err != nil || seq != res.Seq || row.UpdatedAt != res.Row.UpdatedAt {
			t.Fatalf("%s right after %s: seq %d (want %d), %v", key, res.Action, seq, res.Seq, err)
		}
	}
	refused := func(err error, key string, want error) {
		t.Helper()
		var ke *command.KeyError
		if !errors.Is(err, want) || !errors.As(err, &ke) || ke.Key != key {
			t.Fatalf("got %v; want a *KeyError for %s matching %v", err, key, want)
		}
	}

	res, err := d.Create(ctx, fields(t, fmt.Sprintf(nodetest.CompliantRow, "A")))
	if err != nil || res.Action != contract.ActionCreate || !res.Created || res.Key != "A" || res.Row == nil || res.Seq == 0 {
		t.Fatalf("create: %+v %v", res, err)
	}
	readable("A", res)
	before := nodetest.ControlSeq(t, n)
	_, err = d.Create(ctx, fields(t, fmt.Sprintf(nodetest.CompliantRow, "A")))
	refused(err, "A", command.ErrExists)
	_, err = d.Patch(ctx, "A", fields(t, `{"content":""}`))
	var refusal *contract.RefusalError
	if !errors.As(err, &refusal) || refusal.Code != "missing_description" {
		t.Fatalf("patch removing the docstring: %v", err)
	}
	_, err = d.Patch(ctx, "NOPE", fields(t, `{"category":"x"}`))
	refused(err, "NOPE", command.ErrNotFound)
	_, err = d.Delete(ctx, "NOPE")
	refused(err, "NOPE", command.ErrNotFound)
	_, err = d.Replace(ctx, "A", fields(t, `{"key":"B","type":"fn","content":"# WHAT: b"}`))
	refused(err, "A", contract.ErrKeyMismatch)
	_, err = d.Create(ctx, fields(t, `{"key":"S","type":"http","target":"GET http://x","auth":"bearer:DB_PASSWORD","content":"# WHAT: s"}`))
	refused(err, "S", contract.ErrInvalid)
	if got := nodetest.ControlSeq(t, n); got != before {
		t.Fatalf("refused writes appended %d events", got-before)
	}

	res, err = d.Patch(ctx, "A", fields(t, `{"category":"x","sensitive":1}`))
	if err != nil || res.Action != contract.ActionPatch || res.Created || res.Row.Category != "x" || len(res.Ignored) != 1 || res.Ignored[0] != "sensitive" {
		t.Fatalf("patch: %+v %v", res, err)
	}
	readable("A", res)
	res, err = d.Replace(ctx, "B", fields(t, `{"type":"fn","target":"echo","content":"# WHAT: b"}`))
	if err != nil || res.Action != contract.ActionCreate || !res.Created {
		t.Fatalf("replace of an absent key: %+v %v", res, err)
	}
	res, err = d.Replace(ctx, "B", fields(t, `{"type":"fn","target":"now","content":"# WHAT: b"}`))
	if err != nil || res.Action != contract.ActionReplace || res.Created || res.Row.Target != "now" {
		t.Fatalf("replace: %+v %v", res, err)
	}
	readable("B", res)
	res, err = d.Upsert(ctx, fields(t, `{"key":"C","type":"fn","content":"# WHAT: c"}`))
	if err != nil || res.Action != contract.ActionCreate || !res.Created {
		t.Fatalf("upsert of an absent key: %+v %v", res, err)
	}
	res, err = d.Upsert(ctx, fields(t, `{"key":"C","type":"fn","content":"# WHAT: c, again"}`))
	if err != nil || res.Action != contract.ActionReplace || res.Created || res.Row.Content != "# WHAT: c, again" {
		t.Fatalf("upsert of a present key: %+v %v", res, err)
	}
	readable("C", res)
	res, err = d.Delete(ctx, "C")
	if err != nil || res.Action != contract.ActionDelete || res.Row != nil {
		t.Fatalf("delete: %+v %v", res, err)
	}
	readable("C", res)
}

// Concurrent writes to one key through the Directory: each either lands (one event,
// at the sequence it reports) or is refused with ErrConflict, appending nothing.
func TestDirectoryConcurrentWritesConflictOrLand(t *testing.T) {
	n := nodetest.Start(t, nil)
	d := n.Directory()
	ctx := context.Background()
	if _, err := d.Create(ctx, fields(t, fmt.Sprintf(nodetest.CompliantRow, "K"))); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	landed := map[uint64]string{}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cat := fmt.Sprintf("c%d", i)
			res, err := d.Patch(ctx, "K", fields(t, `{"category":"`+cat+`"}`))
			switch {
			case err == nil:
				mu.Lock()
				landed[res.Seq] = cat
				mu.Unlock()
			case !errors.Is(err, command.ErrConflict):
				t.Errorf("patch %s: %v", cat, err)
			}
		}()
	}
	wg.Wait()
	ms := nodetest.Mutations(t, n, "K")
	if len(ms) != 1+len(landed) {
		t.Fatalf("%d mutations for %d writes that landed", len(ms), len(landed))
	}
	for _, m := range ms[1:] {
		if landed[m.Seq] != m.Row.Category {
			t.Fatalf("event %d has category %s; the write that reported it, %q", m.Seq, m.Row.Category, landed[m.Seq])
		}
	}
}
