package wire

import (
	"errors"
	"testing"
)

// Every subject capdir itself uses is reserved, so no row can address the log.
func TestReservedSubjectCoversCapdirsOwn(t *testing.T) {
	own := []string{
		DirectorySubject("K"), BreakerSubject("K"), RequestSubject("K"), ReceiptSubject("K"),
		ReceiptNoticeSubject("c1", "K", "inv_01"), RequestSubjects, ReceiptSubjects,
		BusRequestSubject("c1", "K"), BusClientSubjects("c1"), BusRequestSubjects, ReceiptNotices("c1"), ReceiptNoticeSubjects,
		InboxPrefix("c1"), TokenSubject("0f3a"), StepSubject("K"),
	}
	for _, s := range Streams {
		own = append(own, StreamSubjects(s)...)
	}
	for _, s := range own {
		if !ReservedSubject(s) {
			t.Errorf("ReservedSubject(%q) = false", s)
		}
	}
}

func TestCheckTargetSubject(t *testing.T) {
	tests := []struct {
		subject string
		reason  string // "" for accepted
	}{
		{"svc.upper", ""},
		{"geo.distance.v2", ""},
		{"svc-1_x", ""},
		{"capdirx.svc", ""}, // only the whole first token is capdir's
		{"svc.capdir.x", ""},
		{"svc.$JS", ""},
		{"", SubjectEmpty},
		{"svc bad", SubjectWhitespace},
		{"svc\tbad", SubjectWhitespace},
		{"svc\x00", SubjectWhitespace},
		{"svc\u00a0x", SubjectWhitespace},
		{"svc.*", SubjectWildcard},
		{"svc.>", SubjectWildcard},
		{"svc.a*b", SubjectWildcard},
		{"$JS.API.>", SubjectWildcard},
		{".svc", SubjectEmptyToken},
		{"svc.", SubjectEmptyToken},
		{"svc..x", SubjectEmptyToken},
		{"$JS.API.STREAM.DELETE.CAPDIR_CONTROL", SubjectReserved},
		{"$JS.API.CONSUMER.DELETE.CAPDIR_DATA.capdir-dispatch", SubjectReserved},
		{"$SYS.REQ.SERVER.PING", SubjectReserved},
		{"$KV.bucket.key", SubjectReserved},
		{"$O.store.x", SubjectReserved},
		{"$SRV.PING", SubjectReserved},
		{"$JSC.x", SubjectReserved},
		{"$js.api.info", SubjectReserved},
		{"$JS", SubjectReserved},
		{"_INBOX.abc.1", SubjectReserved},
		{"_inbox.abc", SubjectReserved},
		{"capdir.ctl.dir.K", SubjectReserved},
		{"capdir.data.req.K", SubjectReserved},
		{"capdir.receipt.K.inv_1", SubjectReserved},
		{"CAPDIR.ctl.dir.K", SubjectReserved},
		{"capdir", SubjectReserved},
	}
	for _, tt := range tests {
		err := CheckTargetSubject(tt.subject)
		if tt.reason == "" {
			if err != nil {
				t.Errorf("CheckTargetSubject(%q) = %v, want nil", tt.subject, err)
			}
			continue
		}
		var se *SubjectError
		if !errors.As(err, &se) || se.Reason != tt.reason || se.Subject != tt.subject {
			t.Errorf("CheckTargetSubject(%q) = %v, want reason %s", tt.subject, err, tt.reason)
			continue
		}
		wantKind := ErrBadSubject
		if tt.reason == SubjectReserved {
			wantKind = ErrReservedSubject
		}
		if !errors.Is(err, wantKind) {
			t.Errorf("CheckTargetSubject(%q): %v is not %v", tt.subject, err, wantKind)
		}
	}
	if got := CheckTargetSubject("$JS.API.INFO").Error(); got != `subject "$JS.API.INFO" is reserved: subjects whose first token starts with '$' ($JS., $SYS., $KV., $O., $SRV., ...) are NATS's own API, _INBOX. carries other callers' replies and capdir. is capdir's own log` {
		t.Errorf("message = %s", got)
	}
}
