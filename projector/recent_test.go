package projector_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
)

// RecentReceipts: newest stored first, across keys, filtered, bounded both
// by what it returns and by what it reads.
func TestRecentReceipts(t *testing.T) {
	l := logtest.Open(t, "")
	appendMix(t, l, 30)
	p := open(t, filepath.Join(t.TempDir(), "p.db"), l)
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	ids := func(rcs []wire.Receipt) string {
		var s []string
		for _, rc := range rcs {
			s = append(s, strings.TrimPrefix(rc.InvocationID, "inv_000"))
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct {
		name        string
		limit, scan int
		keep        func(*wire.Receipt) bool
		want        string
	}{
		{"newest five", 5, 100, nil, "29 28 27 26 25"},
		{"filtered", 3, 100, func(rc *wire.Receipt) bool { return strings.HasPrefix(rc.Key, "ROW_0001") }, "19 18 17"},
		{"the scan bound", 10, 3, nil, "29 28 27"},
		{"a filter past the scan bound finds nothing", 10, 5, func(rc *wire.Receipt) bool { return rc.Key == "ROW_00003" }, ""},
		{"no limit", 0, 1000, func(rc *wire.Receipt) bool { return rc.Key < "ROW_00003" }, "02 01 00"},
	} {
		got, err := p.RecentReceipts(tc.limit, tc.scan, tc.keep)
		if err != nil || ids(got) != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, ids(got), err, tc.want)
		}
	}
}
