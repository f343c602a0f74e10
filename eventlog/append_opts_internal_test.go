package eventlog

import (
	"testing"

	"github.com/capdir/capdir/internal/allocstest"
)

// Options add up, the last ExpectLastSubjectSeq standing, and applying them
// allocates nothing (an option that was a function took the options' address,
// which put them on the heap for every append).
func TestAppendOptionsAddUpWithoutAllocating(t *testing.T) {
	opts := []AppendOption{ExpectLastSubjectSeq(7), Packed(), ExpectLastSubjectSeq(0), WithoutDedupe()}
	o := applyAppendOpts(opts)
	if want := (appendOpts{expect: true, expectSeq: 0, noMsgID: true, packed: true}); o != want {
		t.Fatalf("applied: %+v, want %+v", o, want)
	}
	if o.packable() {
		t.Fatal("an append that expects a subject sequence may not go in a pack")
	}
	if o := applyAppendOpts(nil); o != (appendOpts{}) {
		t.Fatalf("no options: %+v", o)
	}
	if n := allocstest.PerRun(t, 100, func() { applyAppendOpts(opts[1:2]) }); n != 0 {
		t.Fatalf("applying an option allocated %v times", n)
	}
}
