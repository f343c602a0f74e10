package gate

import (
	"reflect"
	"testing"
)

// Caller runs exactly the checks of who the caller is, the first ones of the gate.
func TestCallerChecksAreTheIdentityChecks(t *testing.T) {
	want := []check{credential, notRevoked, audience, notOwnerSubject}
	if len(checks) <= callerChecks || callerChecks != len(want) {
		t.Fatalf("callerChecks = %d, want %d", callerChecks, len(want))
	}
	for i, c := range want {
		if reflect.ValueOf(checks[i]).Pointer() != reflect.ValueOf(c).Pointer() {
			t.Fatalf("checks[%d] is not the identity check the gate's Caller expects", i)
		}
	}
}

// Access runs the checks of who the caller is and what it may call: every check
// up to the token's payload ceiling, none of those about running the call now.
func TestAccessChecksEndAtTheTokenPayload(t *testing.T) {
	want := []check{credential, notRevoked, audience, notOwnerSubject, inScope, payloadCeiling,
		rowExists, contractPin, riskCeiling, fixedBody, tokenPayload}
	if accessChecks != len(want) || len(checks) <= accessChecks {
		t.Fatalf("accessChecks = %d, want %d", accessChecks, len(want))
	}
	for i, c := range want {
		if reflect.ValueOf(checks[i]).Pointer() != reflect.ValueOf(c).Pointer() {
			t.Fatalf("checks[%d] is not the access check Access expects", i)
		}
	}
}
