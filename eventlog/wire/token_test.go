package wire

import (
	"strings"
	"testing"
)

// The owner is only ever believed on capdir's own request subject.
func TestOwnerAttested(t *testing.T) {
	tests := []struct {
		subject, credential string
		want                bool
	}{
		{RequestSubject("GREET"), OwnerActor, true},
		{RequestSubject("GREET"), BearerCredential, false},
		{RequestSubject("GREET"), "nats:billing", false},
		{RequestSubject("GREET"), "", false},
		{RequestSubject("GREET"), "owner:terminal-key ", false},
		{RequestSubject("GREET"), "OWNER:terminal-key", false},
		{"capdir.data.bus.billing.GREET", OwnerActor, false},
		{ReceiptSubject("GREET"), OwnerActor, false},
		{"capdir.data.reqX.GREET", OwnerActor, false},
	}
	for _, tc := range tests {
		if got := OwnerAttested(tc.subject, tc.credential); got != tc.want {
			t.Errorf("OwnerAttested(%q, %q) = %v, want %v", tc.subject, tc.credential, got, tc.want)
		}
	}
}

func TestValidTokenID(t *testing.T) {
	for _, ok := range []string{"0123456789abcdef0123456789abcdef", "a", "A_b-9", strings.Repeat("f", MaxTokenIDLen)} {
		if !ValidTokenID(ok) {
			t.Errorf("ValidTokenID(%q) = false", ok)
		}
	}
	for _, bad := range []string{"", "a.b", "a*", "a>", "a b", "é", strings.Repeat("f", MaxTokenIDLen+1)} {
		if ValidTokenID(bad) {
			t.Errorf("ValidTokenID(%q) = true", bad)
		}
	}
	if got := TokenSubject("0f3a"); got != "capdir.ctl.token.0f3a" {
		t.Errorf("TokenSubject = %q", got)
	}
	if got := TokenActor("ci@build-3"); got != "token:ci@build-3" {
		t.Errorf("TokenActor = %q", got)
	}
}
