package wire_test

import (
	"testing"

	"github.com/capdir/capdir/eventlog/wire"
)

// A scoped id names its client unambiguously, maps back to the id the client
// chose for that client only, and is never one a client may choose.
func TestScopedInvocationID(t *testing.T) {
	for _, c := range []struct{ client, id, scoped string }{
		{"c1", "inv_x", "inv_c1~x"},
		{"a-b", "inv_c", "inv_a-b~c"},
		{"a", "inv_b-c", "inv_a~b-c"},
	} {
		got := wire.ScopedInvocationID(c.client, c.id)
		if got != c.scoped || wire.ClientInvocationID(c.client, got) != c.id || wire.ClientInvocationID("other", got) != got {
			t.Errorf("%s %s: scoped %s, back %s", c.client, c.id, got, wire.ClientInvocationID(c.client, got))
		}
		if wire.ValidInvocationID(got) || !wire.ValidReceiptID(got) || len(got) > wire.MaxInvocationIDLen {
			t.Errorf("%s: a client may choose it, or a receipt may not carry it", got)
		}
	}
	for _, id := range []string{"inv_~x", "inv_c1~", "inv_c1~x~y", "inv_c.1~x", "c1~x"} {
		if wire.ValidReceiptID(id) {
			t.Errorf("%q is valid", id)
		}
	}
	if got := wire.ReceiptNoticeSubject("c2", "K", wire.ScopedInvocationID("c2", "inv_x")); got != "capdir.receipt.c2.K.inv_x" {
		t.Errorf("notice subject %s", got)
	}
}
