package wire

import (
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
)

// MaxClientNameLen is the longest name a bus client may have.
const MaxClientNameLen = 64

// ValidClientName reports whether name can name a bus client: 1 to
// MaxClientNameLen characters from A-Z a-z 0-9 _ -, the characters of a row key.
// The name is a token of the client's subjects and inbox, so it holds no '.', no
// wildcard and no whitespace.
func ValidClientName(name string) bool { return len(name) <= MaxClientNameLen && ValidKey(name) }

// CheckClientName returns nil for a valid client name, else an error matching
// ErrBadClient that says what a name may hold.
func CheckClientName(name string) error {
	if ValidClientName(name) {
		return nil
	}
	return fmt.Errorf("%w: %q must be 1 to %d characters from A-Z, a-z, 0-9, '_' and '-'", ErrBadClient, name, MaxClientNameLen)
}

// ClientActor is the actor of a bus client's requests and receipts: "nats:" and its
// name, taken from the subject the request came on.
func ClientActor(client string) string { return clientActorPrefix + client }

const clientActorPrefix = "nats:"

// InboxPrefix is the inbox prefix a bus client's connection must use
// (nats.CustomInboxPrefix): its permissions let it receive replies (JetStream's
// acknowledgement of its requests) only under _INBOX.<client>, so no client reads
// another's replies.
func InboxPrefix(client string) string { return nats.InboxPrefix + client }

// ClientOptions are the connection options a bus client needs besides its
// credential: its inbox prefix (see InboxPrefix) and, unless another is set, its
// name as the connection name. Pass them with the credential option to nats.Connect:
//
//	nc, err := nats.Connect(url, append(wire.ClientOptions("billing"), nats.NkeyOptionFromSeed("billing.nk"))...)
func ClientOptions(client string) []nats.Option {
	return []nats.Option{
		nats.CustomInboxPrefix(InboxPrefix(client)),
		func(o *nats.Options) error {
			if o.Name == "" {
				o.Name = "capdir-bus-" + client
			}
			return nil
		},
	}
}

// checkInbox reports, as an ErrInboxPrefix, a connection whose replies would arrive
// where client may not subscribe: without it, JetStream's acknowledgement of the
// request is refused by the server and the call would only time out.
func checkInbox(nc *nats.Conn, client string) error {
	want := InboxPrefix(client)
	got := strings.TrimSuffix(nc.Opts.InboxPrefix, ".")
	if got == want || strings.HasPrefix(got, want+".") {
		return nil
	}
	if got == "" {
		got = strings.TrimSuffix(nats.InboxPrefix, ".")
	}
	return fmt.Errorf("%w: the connection's inbox prefix is %q, but bus client %s receives replies only under %q: "+
		"connect with wire.ClientOptions(%q) (nats.CustomInboxPrefix(%q))", ErrInboxPrefix, got, client, want, client, want)
}
