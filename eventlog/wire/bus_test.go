package wire_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
)

// TestParseSubjectBusClient pins how a request's subject names its sender: the
// worker's actor and the projector's checks both come from it.
func TestParseSubjectBusClient(t *testing.T) {
	long := strings.Repeat("c", wire.MaxClientNameLen+1)
	tests := []struct {
		subject string
		want    wire.Subject
	}{
		{wire.RequestSubject("GREET"), wire.Subject{Family: wire.RequestFamily, Key: "GREET"}},
		{wire.BusRequestSubject("billing-1", "GREET"), wire.Subject{Family: wire.BusRequestFamily, Client: "billing-1", Key: "GREET"}},
		{"capdir.data.req.", wire.Subject{}},
		{"capdir.data.req.A.B", wire.Subject{}},
		{"capdir.data.bus.GREET", wire.Subject{}},
		{"capdir.data.bus..GREET", wire.Subject{}},
		{"capdir.data.bus.c1.", wire.Subject{}},
		{"capdir.data.bus.c1.A.B", wire.Subject{}},
		{"capdir.data.bus.c*.GREET", wire.Subject{}},
		{"capdir.data.bus." + long + ".GREET", wire.Subject{}},
		{"svc.GREET", wire.Subject{}},
	}
	for _, tt := range tests {
		if got := wire.ParseSubject(tt.subject); got != tt.want {
			t.Errorf("ParseSubject(%q) = %+v; want %+v", tt.subject, got, tt.want)
		}
	}
	// The consumer takes both families that workers run and the packs of
	// capdir's own requests, and not steps.
	if len(wire.AllRequestSubjects) != 3 || wire.AllRequestSubjects[0] != wire.RequestSubjects || wire.AllRequestSubjects[1] != wire.BusRequestSubjects ||
		wire.AllRequestSubjects[2] != wire.RequestPackSubject {
		t.Errorf("AllRequestSubjects = %v", wire.AllRequestSubjects)
	}
}

func TestCheckClientName(t *testing.T) {
	for _, name := range []string{"c1", "billing-service", "A_b-9", strings.Repeat("c", wire.MaxClientNameLen)} {
		if err := wire.CheckClientName(name); err != nil {
			t.Errorf("CheckClientName(%q) = %v", name, err)
		}
	}
	for _, name := range []string{"", "a.b", "a*", ">", "a b", "é", strings.Repeat("c", wire.MaxClientNameLen+1)} {
		if err := wire.CheckClientName(name); !errors.Is(err, wire.ErrBadClient) {
			t.Errorf("CheckClientName(%q) = %v, want ErrBadClient", name, err)
		}
	}
}

// Invoke refuses, before it publishes anything, a bad client name, a bad option
// and a connection whose replies the client's permissions would refuse.
func TestInvokeRefusesBeforePublishing(t *testing.T) {
	ctx := context.Background()
	// A connection that was never connected: anything Invoke sent would fail
	// differently from the refusals expected here.
	conn := func(prefix string) *nats.Conn { return &nats.Conn{Opts: nats.Options{InboxPrefix: prefix}} }
	tests := []struct {
		name   string
		nc     *nats.Conn
		client string
		opts   []wire.InvokeOption
		want   error
		says   string
	}{
		{"default inbox", conn(""), "c1", nil, wire.ErrInboxPrefix, `connect with wire.ClientOptions("c1")`},
		{"another client's inbox", conn("_INBOX.c2"), "c1", nil, wire.ErrInboxPrefix, `only under "_INBOX.c1"`},
		{"a prefix sharing the name's start", conn("_INBOX.c10"), "c1", nil, wire.ErrInboxPrefix, ""},
		{"bad client name", conn("_INBOX.c1"), "c.1", nil, wire.ErrBadClient, ""},
		{"empty token", conn("_INBOX.c1"), "c1", []wire.InvokeOption{wire.WithToken("")}, wire.ErrBadOption, "1 to 8192 bytes"},
		{"token with a space", conn("_INBOX.c1"), "c1", []wire.InvokeOption{wire.WithToken("a b")}, wire.ErrBadOption, "without spaces"},
		{"oversized token", conn("_INBOX.c1"), "c1", []wire.InvokeOption{wire.WithToken(strings.Repeat("a", wire.MaxTokenLen+1))}, wire.ErrBadOption, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := wire.Invoke(ctx, tt.nc, tt.client, "K", "x", tt.opts...)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("err = %v, want %v saying %q", err, tt.want, tt.says)
			}
		})
	}
}

func TestClientOptions(t *testing.T) {
	var o nats.Options
	for _, opt := range wire.ClientOptions("c1") {
		if err := opt(&o); err != nil {
			t.Fatal(err)
		}
	}
	if o.InboxPrefix != "_INBOX.c1" || o.Name != "capdir-bus-c1" {
		t.Fatalf("options: inbox %q, name %q", o.InboxPrefix, o.Name)
	}
	o = nats.Options{Name: "mine"}
	for _, opt := range wire.ClientOptions("c1") {
		opt(&o)
	}
	if o.Name != "mine" {
		t.Fatalf("ClientOptions replaced the connection's name %q", o.Name)
	}
}

func TestNewBusRequest(t *testing.T) {
	subject, ev, req, err := wire.NewBusRequest("c1", "GREET", "Ada", time.Date(2026, 7, 26, 4, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if subject != "capdir.data.bus.c1.GREET" || ev.Actor != "nats:c1" || req.Credential != "nats:c1" || req.Token != "" || req.InvocationID == "" {
		t.Fatalf("subject %s, event %+v, request %+v", subject, ev, req)
	}
	if _, _, _, err := wire.NewBusRequest("c.1", "GREET", "", time.Date(2026, 7, 26, 4, 0, 0, 0, time.UTC)); !errors.Is(err, wire.ErrBadClient) {
		t.Fatalf("bad client: %v", err)
	}
}
