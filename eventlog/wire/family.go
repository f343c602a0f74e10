package wire

import "strings"

// Family is the kind of a subject of capdir's log: which events it holds. Only
// capdir's own connection may write the directory, receipt and breaker families (NATS
// permissions, see the README's Invoking over NATS); bus clients may write requests.
type Family int

// Subject families.
const (
	// NoFamily: not a subject of capdir's log, or not well formed (a key that is
	// not ValidKey, a missing or extra token).
	NoFamily Family = iota
	// DirectoryFamily: capdir.ctl.dir.<KEY>, directory mutations.
	DirectoryFamily
	// RequestFamily: capdir.data.req.<KEY>, invocation requests.
	RequestFamily
	// BusRequestFamily: capdir.data.bus.<CLIENT>.<KEY>, invocation requests from a
	// bus client.
	BusRequestFamily
	// ReceiptFamily: capdir.data.rcpt.<KEY>, receipts; logs written before receipts
	// shared their row's subject hold them on capdir.data.rcpt.<KEY>.<INVOCATION>.
	ReceiptFamily
	// BreakerFamily: capdir.data.breaker.<KEY>, breaker resets.
	BreakerFamily
	// StepFamily: capdir.data.step.<KEY>, the requests of a flow's steps and an
	// agent's tool calls, run by their caller's worker.
	StepFamily
	// TokenFamily: capdir.ctl.token.<JTI>, capability token revocations; Key holds
	// the token id.
	TokenFamily
	// ApprovalFamily: capdir.ctl.approval.<INVOCATION>, the approval of one call to
	// a sensitive row; Key holds the invocation id.
	ApprovalFamily
	// UpstreamFamily: capdir.ctl.upstream.<NAME>, the owner's registrations of
	// upstream MCP servers; Key holds the upstream's name.
	UpstreamFamily
	// NodeKeyFamily: capdir.ctl.nodekey.<ID>, the nodes' announcements of their
	// checkpoint keys; Key holds the key's id.
	NodeKeyFamily
)

var familyNames = [...]string{"none", "directory", "request", "bus request", "receipt", "breaker", "step", "token", "approval", "upstream", "node key"}

// String names the family, e.g. "receipt".
func (f Family) String() string {
	if f < 0 || int(f) >= len(familyNames) {
		return "none"
	}
	return familyNames[f]
}

// Subject is a subject of capdir's log split into its parts.
type Subject struct {
	Family Family
	// Client is the bus client's token (BusRequestFamily only).
	Client string
	// Key is the row key the subject names.
	Key string
	// Invocation is the invocation id a receipt's subject names in the layout logs
	// written before receipts shared their row's subject still hold
	// (capdir.data.rcpt.<KEY>.<INVOCATION>); empty otherwise.
	Invocation string
}

// familyPrefixes maps each family to its prefix; BusRequestFamily and the old
// receipt layout are handled apart.
var familyPrefixes = []struct {
	prefix string
	family Family
}{
	{directoryPrefix, DirectoryFamily},
	{requestPrefix, RequestFamily},
	{breakerPrefix, BreakerFamily},
	{stepPrefix, StepFamily},
	{tokenPrefix, TokenFamily},
	{approvalPrefix, ApprovalFamily},
	{upstreamPrefix, UpstreamFamily},
	{nodeKeyPrefix, NodeKeyFamily},
}

// ParseSubject splits a subject of the log into its family, client, key and
// invocation. A subject outside every family, or whose key is not ValidKey, or a bus
// subject whose client token is not ValidClientName, gives Family NoFamily and
// nothing else. The worker and the projector both read a request's sender through
// it, so they agree on who sent one.
func ParseSubject(subject string) Subject {
	if rest, ok := strings.CutPrefix(subject, busPrefix); ok {
		client, key, ok := strings.Cut(rest, ".")
		if !ok || !ValidClientName(client) || !ValidKey(key) {
			return Subject{}
		}
		return Subject{Family: BusRequestFamily, Client: client, Key: key}
	}
	if rest, ok := strings.CutPrefix(subject, receiptPrefix); ok {
		key, inv, old := strings.Cut(rest, ".")
		if !ValidKey(key) || old && (inv == "" || strings.Contains(inv, ".")) {
			return Subject{}
		}
		return Subject{Family: ReceiptFamily, Key: key, Invocation: inv}
	}
	for _, fp := range familyPrefixes {
		if key, ok := strings.CutPrefix(subject, fp.prefix); ok {
			if !ValidKey(key) {
				return Subject{}
			}
			return Subject{Family: fp.family, Key: key}
		}
	}
	return Subject{}
}
