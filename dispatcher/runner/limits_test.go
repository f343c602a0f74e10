package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/internal/allocstest"
)

// A zero Limits takes the defaults, with the runner's own timeout (none for 0);
// a set field is kept.
func TestLimitsWithDefaults(t *testing.T) {
	for _, tc := range []struct {
		in      Limits
		timeout time.Duration
		want    Limits
	}{
		{Limits{}, DefaultTimeout, Limits{DefaultTimeout, DefaultMaxResultBytes, DefaultMaxSubstitutionBytes}},
		{Limits{}, 0, Limits{0, DefaultMaxResultBytes, DefaultMaxSubstitutionBytes}},
		{Limits{time.Second, 10, 20}, DefaultTimeout, Limits{time.Second, 10, 20}},
	} {
		if got := tc.in.WithDefaults(tc.timeout); got != tc.want {
			t.Errorf("%+v.WithDefaults(%v) = %+v, want %+v", tc.in, tc.timeout, got, tc.want)
		}
	}
}

// Validate names every negative limit with the runner's package.
func TestLimitsValidate(t *testing.T) {
	if err := (Limits{}).Validate("xrunner"); err != nil {
		t.Fatalf("zero limits: %v", err)
	}
	err := Limits{-1, -1, -1}.Validate("xrunner")
	for _, want := range []string{"xrunner: Config.Timeout must not be negative", "xrunner: Config.MaxResultBytes must not be negative", "xrunner: Config.MaxSubstitutionBytes must not be negative"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to say %q", err, want)
		}
	}
}

// Bound puts a deadline on the context only when Timeout is positive.
func TestLimitsBound(t *testing.T) {
	ctx, cancel := Limits{}.Bound(context.Background())
	defer cancel()
	if _, ok := ctx.Deadline(); ok {
		t.Errorf("no timeout, yet a deadline")
	}
	ctx, cancel = Limits{Timeout: time.Hour}.Bound(context.Background())
	defer cancel()
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > time.Hour {
		t.Errorf("deadline %v, %v; want one within the hour", d, ok)
	}
}

// Bound with no timeout hands back the caller's context: nothing is allocated on
// the call path of a runner that has no timeout of its own (fn, flow).
func TestLimitsBoundWithoutTimeoutAllocatesNothing(t *testing.T) {
	parent := context.Background()
	allocs := allocstest.PerRun(t, 100, func() {
		ctx, cancel := Limits{}.Bound(parent)
		cancel()
		if ctx != parent {
			t.Fatal("Bound without a timeout made a new context")
		}
	})
	if allocs != 0 {
		t.Errorf("Bound without a timeout: %v allocations, want 0", allocs)
	}
}
