package eventlog

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// The embedded server's authentication when it listens on TCP: NATS's own nkey
// users, permissions and accounts, nothing of capdir's on the wire.
//
//   - capdir's own connection is an nkey user generated at every start and never
//     written anywhere, allowed in-process only, with every permission in the
//     global account, which holds the log's streams.
//   - A node (RoleNode) is capdir on another machine: every permission there too.
//   - A service (RoleService) is in the global account, may subscribe to the
//     subjects it serves and answer what it receives there (allow_responses), and
//     publish nothing else.
//   - A client (RoleClient) is alone in an account of its own, which imports
//     three things from the global account: its request subjects and its call
//     subjects (service imports, so JetStream's acknowledgement and capdir's
//     reply travel back through the import) and its receipt notices (a stream
//     import). Its permissions allow exactly those and its replies under its own
//     inbox prefix.
//
// Why accounts and not permissions alone: NATS does not restrict the reply subject
// of a publish, and JetStream sends its acknowledgement to whatever reply subject a
// message names. A client in the global account could name a subject of the
// control stream as its reply, and JetStream would store its acknowledgement there.
// In an account of its own, a reply subject is one of that account's subjects.

// globalAccount is the account of the log's streams: the server's default one, so a
// store written before clients were admitted is the same store.
const globalAccount = server.DEFAULT_GLOBAL_ACCOUNT

// ClientAccount is the account the embedded server puts a bus client in. (A
// cluster configured by hand, see examples/cluster, may name its accounts as it
// likes.)
func ClientAccount(client string) string { return "capdir-bus-" + client }

// ClientPermissions are a bus client's permissions: publish its requests and its
// calls, receive its receipt notices and its replies (JetStream's
// acknowledgements, capdir's replies to its calls). The sample cluster
// configuration grants the same.
func ClientPermissions(client string) *server.Permissions {
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: []string{wire.BusClientSubjects(client), wire.ClientCalls(client)}},
		Subscribe: &server.SubjectPermission{Allow: []string{wire.ReceiptNotices(client), wire.InboxPrefix(client) + ".>"}},
	}
}

// ServicePermissions are a service's permissions: receive what capdir sends on the
// subjects it serves and answer it, publish nothing else.
func ServicePermissions(serve []string) *server.Permissions {
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: []string{}}, // none but the responses below
		Subscribe: &server.SubjectPermission{Allow: append([]string(nil), serve...)},
		Response:  &server.ResponsePermission{MaxMsgs: server.DEFAULT_ALLOW_RESPONSE_MAX_MSGS, Expires: server.DEFAULT_ALLOW_RESPONSE_EXPIRATION},
	}
}

// busAuth is the embedded server's authentication: capdir's own key and the
// recorded identities.
type busAuth struct {
	self    nkeys.KeyPair
	selfPub string
	clients []BusClient
}

// newBusAuth generates capdir's own key and reads the data dir's identities.
func newBusAuth(dataDir string) (*busAuth, error) {
	clients, err := BusClients(dataDir)
	if err != nil {
		return nil, err
	}
	seen := map[string]string{}
	for _, c := range clients {
		if other, dup := seen[c.PublicKey]; dup {
			return nil, fmt.Errorf("%w: %s and %s have the same public key; remove one with capdir bus remove", ErrBusClient, other, c.Name)
		}
		seen[c.PublicKey] = c.Name
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, fmt.Errorf("eventlog: capdir's own bus key: %w", err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("eventlog: capdir's own bus key: %w", err)
	}
	return &busAuth{self: kp, selfPub: pub, clients: clients}, nil
}

// apply sets opts' accounts and users.
func (a *busAuth) apply(opts *server.Options) error {
	g := server.NewAccount(globalAccount)
	accounts := []*server.Account{g}
	users := []*server.NkeyUser{{
		Nkey:                   a.selfPub,
		AllowedConnectionTypes: map[string]struct{}{jwt.ConnectionTypeInProcess: {}},
	}}
	for _, c := range a.clients {
		switch c.Role {
		case RoleNode:
			users = append(users, &server.NkeyUser{Nkey: c.PublicKey})
		case RoleService:
			users = append(users, &server.NkeyUser{Nkey: c.PublicKey, Permissions: ServicePermissions(c.Serve)})
		case RoleClient:
			acc, err := clientAccount(g, c.Name)
			if err != nil {
				return err
			}
			accounts = append(accounts, acc)
			users = append(users, &server.NkeyUser{Nkey: c.PublicKey, Account: acc, Permissions: ClientPermissions(c.Name)})
		}
	}
	opts.Accounts = accounts
	opts.Nkeys = users
	return nil
}

// clientAccount is a client's own account, importing from g its request and call
// subjects (services) and its receipt notices (a stream), each exported to it
// alone.
func clientAccount(g *server.Account, client string) (*server.Account, error) {
	acc := server.NewAccount(ClientAccount(client))
	only := []*server.Account{acc}
	requests, calls, notices := wire.BusClientSubjects(client), wire.ClientCalls(client), wire.ReceiptNotices(client)
	for _, err := range []error{
		g.AddServiceExport(requests, only),
		g.AddServiceExport(calls, only),
		g.AddStreamExport(notices, only),
		acc.AddServiceImport(g, requests, ""),
		acc.AddServiceImport(g, calls, ""),
		acc.AddStreamImport(g, notices, ""),
	} {
		if err != nil {
			return nil, fmt.Errorf("eventlog: bus client %s: %w", client, err)
		}
	}
	return acc, nil
}

// enableJetStream turns JetStream on for the global account once the server runs:
// with accounts configured, the server enables it only for accounts its
// configuration file says, and the global account cannot be named there. Its
// streams are read back from the store as at any start.
func (a *busAuth) enableJetStream(srv *server.Server) error {
	g := srv.GlobalAccount()
	if g.JetStreamEnabled() {
		return nil // no client account: the server did it
	}
	unlimited := server.JetStreamAccountLimits{MaxMemory: -1, MaxStore: -1, MaxStreams: -1, MaxConsumers: -1,
		MaxAckPending: -1, MemoryMaxStreamBytes: -1, StoreMaxStreamBytes: -1}
	if err := g.EnableJetStream(map[string]server.JetStreamAccountLimits{"": unlimited}, nil); err != nil {
		return fmt.Errorf("eventlog: jetstream for the log's account: %w", err)
	}
	return nil
}

// connOption authenticates capdir's own in-process connection.
func (a *busAuth) connOption() nats.Option { return nats.Nkey(a.selfPub, a.self.Sign) }

// credsOption is the connection option for a credential file given for an external
// cluster: a .creds file (a user JWT and its seed, as nsc writes it) or a file
// holding an nkey seed (as capdir bus add-client writes it). The file must be
// readable by its owner only.
func credsOption(path string) (nats.Option, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v (--nats-creds)", ErrCreds, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCreds, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrCreds, path)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return nil, fmt.Errorf("%w: %s has mode %04o; a NATS credential must be readable by its owner only: chmod 600 %s", ErrCreds, path, perm, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCreds, path, err)
	}
	if bytes.Contains(b, []byte("-----BEGIN NATS USER JWT-----")) {
		return nats.UserCredentials(path), nil
	}
	if !bytes.Contains(b, []byte("SU")) {
		return nil, fmt.Errorf("%w: %s holds neither a user JWT (.creds) nor an nkey user seed (SU...)", ErrCreds, path)
	}
	opt, err := nats.NkeyOptionFromSeed(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCreds, path, err)
	}
	return opt, nil
}

// identityNames lists the recorded identities for the start-up log line.
func identityNames(clients []BusClient) string {
	var b strings.Builder
	for i, c := range clients {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Name + " (" + c.Role + ")")
	}
	return b.String()
}
