package wire_test

import (
	"strings"
	"testing"

	"github.com/capdir/capdir/eventlog/wire"
)

func TestParseSubject(t *testing.T) {
	long := strings.Repeat("K", wire.MaxKeyLen+1)
	for _, tc := range []struct {
		subject string
		want    wire.Subject
	}{
		{wire.DirectorySubject("GREET"), wire.Subject{Family: wire.DirectoryFamily, Key: "GREET"}},
		{wire.RequestSubject("GREET"), wire.Subject{Family: wire.RequestFamily, Key: "GREET"}},
		{wire.BusRequestSubject("alice", "GREET"), wire.Subject{Family: wire.BusRequestFamily, Client: "alice", Key: "GREET"}},
		{wire.ReceiptSubject("GREET"), wire.Subject{Family: wire.ReceiptFamily, Key: "GREET"}},
		// Logs written before receipts shared their row's subject.
		{"capdir.data.rcpt.GREET.inv_01", wire.Subject{Family: wire.ReceiptFamily, Key: "GREET", Invocation: "inv_01"}},
		{wire.BreakerSubject("GREET"), wire.Subject{Family: wire.BreakerFamily, Key: "GREET"}},
		{wire.ApprovalSubject("inv_01"), wire.Subject{Family: wire.ApprovalFamily, Key: "inv_01"}},
		{"capdir.ctl.approval.inv.x", wire.Subject{}},
		{wire.UpstreamSubject("github"), wire.Subject{Family: wire.UpstreamFamily, Key: "github"}},
		{"capdir.ctl.upstream.git.hub", wire.Subject{}},
		{"capdir.ctl.upstream.", wire.Subject{}},

		{"capdir.ctl.dir.", wire.Subject{}},
		{"capdir.ctl.dir.A.B", wire.Subject{}},
		{"capdir.ctl.dir." + long, wire.Subject{}},
		{"capdir.ctl.tok.X", wire.Subject{}},
		{"capdir.data.req.A.B", wire.Subject{}},
		{"capdir.data.bus.GREET", wire.Subject{}},
		{"capdir.data.bus..GREET", wire.Subject{}},
		{"capdir.data.bus.alice.A.B", wire.Subject{}},
		{"capdir.data.rcpt.GREET.", wire.Subject{}},
		{"capdir.data.rcpt.GREET.inv.x", wire.Subject{}},
		{"capdir.data.breaker.A.B", wire.Subject{}},
		{"capdir.data.other.GREET", wire.Subject{}},
		{wire.ReceiptNoticeSubject("alice", "GREET", "inv_01"), wire.Subject{}},
		{"", wire.Subject{}},
	} {
		if got := wire.ParseSubject(tc.subject); got != tc.want {
			t.Errorf("ParseSubject(%q) = %+v, want %+v", tc.subject, got, tc.want)
		}
	}
}

func TestFamilyString(t *testing.T) {
	if got := wire.ReceiptFamily.String(); got != "receipt" {
		t.Fatalf("ReceiptFamily = %q", got)
	}
	if got := wire.Family(99).String(); got != "none" {
		t.Fatalf("Family(99) = %q", got)
	}
}
