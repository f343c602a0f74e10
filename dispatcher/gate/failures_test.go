package gate_test

import (
	"sync"
	"testing"

	"github.com/capdir/capdir/dispatcher/gate"
)

// refused are the literals the gate's table tests saw it refuse with.
var refused = struct {
	sync.Mutex
	reasons map[string]bool
}{reasons: map[string]bool{}}

// saw records r's literal, when r is a refusal.
func saw(r *gate.Refusal) {
	if r == nil {
		return
	}
	refused.Lock()
	defer refused.Unlock()
	refused.reasons[r.Literal] = true
}

// The gate's failure table is what the gate produces: the table tests of its
// checks drive it into every refusal, each refusal's literal is an instance of
// an entry (the first that fits is the one it is documented by), and every
// entry is met.
func TestGateFailureTable(t *testing.T) {
	for _, tt := range []struct {
		name string
		test func(*testing.T)
	}{
		{"Check", TestGateCheck}, {"TokenChecks", TestGateTokenChecks}, {"Caller", TestGateCaller},
		{"RevocationUnknown", TestGateRevocationUnknown}, {"Input", TestGateInputAfterTokenChecks},
		{"Watcher", TestGateWatcher},
	} {
		t.Run(tt.name, tt.test)
	}
	refused.Lock()
	defer refused.Unlock()
	met := map[string]bool{}
	for reason := range refused.reasons {
		e, ok := gate.Failures.Match(reason)
		if !ok {
			t.Errorf("the gate refused with %q, no entry of its failure table", reason)
			continue
		}
		met[e.Literal] = true
	}
	// token:invalid is Reason's answer to an error that is no token refusal, which
	// verification never returns (FuzzVerify checks it); TestReasonLiterals of
	// package token drives Reason into it.
	met["token:invalid"] = true
	for _, e := range gate.Failures {
		if !met[e.Literal] {
			t.Errorf("no refusal of the gate's tests is an instance of %q", e.Literal)
		}
	}
}
