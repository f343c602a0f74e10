package api_test

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/internal/nodetest"
)

// Fifty PATCHes of one key race. Each is applied (200) or refused as a conflict
// (409), none is lost: the log holds exactly one patch event per 200, each built on
// the row the previous event left, and the projected row is the one of the last
// applied event. nodetest's cleanup then checks that replay gives the same digest.
func TestConcurrentPatchesNeverLoseAnUpdate(t *testing.T) {
	n := nodetest.Start(t, nil)
	mustDo(t, n, http.StatusCreated, "POST", "/api/directory", fmt.Sprintf(compliantRow, "RACED"))

	const writers = 50
	statuses := make([]int, writers)
	bodies := make([]string, writers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			statuses[i], bodies[i] = nodetest.Do(t, n, "PATCH", "/api/directory/RACED",
				fmt.Sprintf(`{"planner_rank":%d,"category":"w%d"}`, 1000+i, i))
		}()
	}
	close(start)
	wg.Wait()

	var applied []int // planner_rank of every 200
	conflicts := 0
	for i, st := range statuses {
		switch st {
		case http.StatusOK:
			applied = append(applied, 1000+i)
		case http.StatusConflict:
			var e struct {
				Error string `json:"error"`
			}
			decode(t, bodies[i], &e)
			if want := "conflict: RACED was changed by another writer between this request's read and its write; nothing was written; re-read the row and retry"; e.Error != want {
				t.Errorf("409 body %s", bodies[i])
			}
			conflicts++
		default:
			t.Fatalf("writer %d: HTTP %d %s", i, st, bodies[i])
		}
	}
	if len(applied) == 0 {
		t.Fatal("no PATCH was applied")
	}
	t.Logf("%d applied, %d conflicts", len(applied), conflicts)

	ms := nodetest.Mutations(t, n, "RACED")
	patches := ms[1:]
	if ms[0].Action != contract.ActionCreate || len(patches) != len(applied) {
		t.Fatalf("%d events after the create for %d applied PATCHes", len(patches), len(applied))
	}
	var logged []int
	prev := ms[0].Row
	for _, m := range patches {
		if m.Action != contract.ActionPatch || m.Row == nil {
			t.Fatalf("event %d: %+v", m.Seq, m.DirectoryMutation)
		}
		// Each patch was decided on the row the previous event left: apart from
		// the patched fields and updated_at, nothing differs.
		want := *prev
		want.PlannerRank, want.Category, want.UpdatedAt = m.Row.PlannerRank, m.Row.Category, m.Row.UpdatedAt
		if fmt.Sprint(want) != fmt.Sprint(*m.Row) {
			t.Fatalf("event %d is not built on its predecessor:\n got %+v\nwant %+v", m.Seq, *m.Row, want)
		}
		if m.Row.Category != fmt.Sprintf("w%d", m.Row.PlannerRank-1000) {
			t.Fatalf("event %d mixes two writers: %+v", m.Seq, *m.Row)
		}
		logged = append(logged, m.Row.PlannerRank)
		prev = m.Row
	}
	slices.Sort(logged)
	slices.Sort(applied)
	if !slices.Equal(logged, applied) {
		t.Fatalf("applied ranks %v, logged %v", applied, logged)
	}

	last := patches[len(patches)-1].Row
	var row contract.Row
	decode(t, mustDo(t, n, http.StatusOK, "GET", "/api/directory/RACED", ""), &row)
	if row.PlannerRank != last.PlannerRank || row.Category != last.Category || row.UpdatedAt != last.UpdatedAt {
		t.Fatalf("final row rank %d category %s, want the last applied event's %d %s", row.PlannerRank, row.Category, last.PlannerRank, last.Category)
	}
}
