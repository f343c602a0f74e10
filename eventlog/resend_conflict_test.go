package eventlog_test

import (
	"context"
	"testing"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
)

// An append sent again after its first copy was stored (its answer lost) is
// answered with the first copy's sequence, also when it expects the subject's
// last sequence, which the first copy has moved on.
func TestAppendSentAgainWithAnExpectedSequenceIsTheFirstCopy(t *testing.T) {
	l := logtest.Open(t, "")
	ev := mustEvent(t, l, wire.TypeDirectoryMutate, map[string]any{"key": "K"})
	subj := wire.DirectorySubject("K")
	first, err := l.Append(context.Background(), subj, ev, eventlog.ExpectLastSubjectSeq(0))
	if err != nil {
		t.Fatal(err)
	}
	again, err := l.Append(context.Background(), subj, ev, eventlog.ExpectLastSubjectSeq(0))
	if err != nil || again != first {
		t.Fatalf("the same append again: %d, %v; want %d", again, err, first)
	}
}
