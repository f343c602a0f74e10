package dispatcher

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/capdir/capdir/eventlog/wire"
)

func TestFinishFitsTheReceiptInOneEvent(t *testing.T) {
	t0 := time.Date(2026, 7, 26, 4, 36, 19, 0, time.UTC)
	cases := []struct {
		name              string
		body, result      string
		resultCap, budget int
		wantBody, wantRes int // stored lengths, -1 for whole
		wantTrunc         bool
	}{
		{"fits", "a|b", "ok", 100, 100, -1, -1, false},
		{"result over its cap", "a", strings.Repeat("r", 50), 20, 1000, -1, 20, true},
		{"large result, small body", "a|b", strings.Repeat("r", 500), 0, 100, -1, 97, true},
		{"large body, small result", strings.Repeat("b", 500), "ok", 0, 100, 98, -1, true},
		{"both large", strings.Repeat("b", 500), strings.Repeat("r", 500), 0, 100, 50, 50, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := newDraft(&wire.InvocationRequest{InvocationID: "inv_x", Key: "K", Body: tc.body}, "owner", "w", t0)
			d.Result = tc.result
			rc := d.finish(t0.Add(time.Millisecond), tc.resultCap, tc.budget)
			if rc.Fingerprints.Input != Fingerprint(tc.body) || rc.Fingerprints.Output != Fingerprint(tc.result) {
				t.Fatal("fingerprints must cover the whole input and output")
			}
			check := func(what, got, orig string, want int) {
				if want < 0 {
					if got != orig {
						t.Fatalf("%s cut: %q", what, got)
					}
					return
				}
				if len(got) != want || !strings.HasSuffix(got, truncMark) {
					t.Fatalf("%s stored %d bytes (%q), want %d ending in the mark", what, len(got), got, want)
				}
			}
			check("body", rc.Body, tc.body, tc.wantBody)
			check("result", rc.Result, tc.result, tc.wantRes)
			if tc.budget > 0 && len(rc.Body)+len(rc.Result) > tc.budget {
				t.Fatalf("stored %d bytes over a budget of %d", len(rc.Body)+len(rc.Result), tc.budget)
			}
			if got := rc.Extra["truncated"] == true; got != tc.wantTrunc {
				t.Fatalf("truncated = %v", got)
			}
		})
	}
	// A cut never splits a rune.
	if s, _ := truncate(strings.Repeat("é", 40), 30); !utf8.ValidString(s) || len(s) > 30 {
		t.Fatalf("truncate split a rune or overran: %q (%d)", s, len(s))
	}
}
