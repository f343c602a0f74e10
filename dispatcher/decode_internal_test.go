package dispatcher

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
)

// Who sent a request is its subject's business: the owner only on capdir's own
// subject with capdir's attestation; on a bus subject, the client the subject
// names, whatever the body claims.
func TestDecodeRequestTakesTheSenderFromTheSubject(t *testing.T) {
	body := func(req wire.InvocationRequest, actor string) []byte {
		ev, err := wire.PrepareRequest(time.Now(), &req)
		if err != nil {
			t.Fatal(err)
		}
		if actor != "" {
			ev.Actor = actor
		}
		b, _ := json.Marshal(ev)
		return b
	}
	owner := wire.InvocationRequest{Key: "SAY", Credential: wire.OwnerActor, DirSeq: 7}
	tests := []struct {
		name    string
		subject string
		data    []byte
		want    sender
		cred    string // the request's credential after decoding
		dirSeq  uint64
		err     string
	}{
		{name: "capdir's own, attested owner", subject: wire.RequestSubject("SAY"), data: body(owner, ""),
			want: sender{actor: wire.OwnerActor, owner: true}, cred: wire.OwnerActor, dirSeq: 7},
		{name: "capdir's own, another credential", subject: wire.RequestSubject("SAY"), data: body(wire.InvocationRequest{Key: "SAY", Credential: "token:abc"}, ""),
			want: sender{actor: "token:abc"}, cred: "token:abc"},
		{name: "bus client claiming the owner", subject: wire.BusRequestSubject("c1", "SAY"), data: body(owner, wire.OwnerActor),
			want: sender{client: "c1", actor: "nats:c1"}, cred: "nats:c1"},
		{name: "bus client claiming another client", subject: wire.BusRequestSubject("c1", "SAY"), data: body(wire.InvocationRequest{Key: "SAY", Credential: "nats:c2"}, "nats:c2"),
			want: sender{client: "c1", actor: "nats:c1"}, cred: "nats:c1"},
		{name: "bus client, key left empty", subject: wire.BusRequestSubject("c1", "SAY"), data: []byte(`{"id":"01J0000000000000000000000A","type":"INVOCATION_REQUESTED","at":"2026-01-01T00:00:00Z","actor":"","data":{"body":"x"}}`),
			want: sender{client: "c1", actor: "nats:c1"}, cred: "nats:c1"},
		{name: "bus client, invocation id not a subject token", subject: wire.BusRequestSubject("c1", "SAY"),
			data: body(wire.InvocationRequest{InvocationID: "inv_a.b", Key: "SAY"}, ""), err: "bad invocation id"},
		{name: "bus key differs from the body's", subject: wire.BusRequestSubject("c1", "OTHER"), data: body(owner, ""), err: "does not match subject"},
		{name: "bus subject without a key", subject: "capdir.data.bus.SAY", data: body(owner, ""), err: "is not capdir.data.req"},
		{name: "bus subject with an extra token", subject: "capdir.data.bus.c1.x.SAY", data: body(owner, ""), err: "is not capdir.data.req"},
		{name: "own subject with an extra token", subject: "capdir.data.req.x.SAY", data: body(owner, ""), err: "is not capdir.data.req"},
		{name: "a receipt subject", subject: wire.ReceiptSubject("SAY"), data: body(owner, ""), err: "is not capdir.data.req"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, from, err := decodeRequest(&heldMsg{subject: tt.subject, data: tt.data})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if from.eventID == "" {
				t.Fatal("the sender has no event id")
			}
			from.eventID = ""
			if from != tt.want || req.Credential != tt.cred || req.DirSeq != tt.dirSeq || req.Key != "SAY" {
				t.Fatalf("sender %+v, credential %q, dir_seq %d, key %q; want %+v, %q, %d, SAY", from, req.Credential, req.DirSeq, req.Key, tt.want, tt.cred, tt.dirSeq)
			}
		})
	}
}
