package wire

import (
	"encoding/json"
	"testing"
)

// An approval's fingerprint is of the input its call sent (the body, or the
// named arguments); one recorded before it covered named arguments (the empty
// body's, for a call with arguments) still matches that call, and nothing else.
func TestApprovalMatches(t *testing.T) {
	body := &InvocationRequest{Body: "alice|10"}
	args := &InvocationRequest{Args: json.RawMessage(`{"to":"alice","amount":"10"}`)}
	for _, c := range []struct {
		fp   string
		r    *InvocationRequest
		want bool
	}{
		{Fingerprint("alice|10"), body, true},
		{Fingerprint(""), body, false},
		{Fingerprint(`{"to":"alice","amount":"10"}`), args, true},
		{Fingerprint(""), args, true}, // recorded before: the empty body's
		{Fingerprint(`{"to":"mallory","amount":"10"}`), args, false},
		{Fingerprint("alice|10"), args, false},
		{Fingerprint(""), &InvocationRequest{}, true},
	} {
		if got := ApprovalMatches(c.fp, c.r); got != c.want {
			t.Errorf("ApprovalMatches(%s…, body %q args %s) = %v, want %v", c.fp[:8], c.r.Body, c.r.Args, got, c.want)
		}
	}
}
