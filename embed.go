package capdir

import (
	"context"
	"net/http"

	"github.com/capdir/capdir/api/mcp"
	"github.com/capdir/capdir/command"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
	"github.com/prometheus/client_golang/prometheus"
)

// Directory is the node's directory write path: Create, Replace, Patch, Delete,
// Upsert and the imports, with the same validation, optimistic concurrency and
// read-your-writes as the REST routes, which call it too. A row written here is
// callable through [Node.Invoke] the moment the call returns.
func (n *Node) Directory() *command.Directory { return n.srv.Directory() }

// Invoke calls a row in Go and waits for its receipt in the log, as a request
// through the HTTP facade or the bus would: the gate, the breakers and the
// receipt are the same. A request that carries neither Credential nor Token is
// the owner's (the program that embeds the node holds the owner key); one that
// carries Token is the token's. InvocationID and Trace are minted when empty.
// When ctx ends first, the returned receipt carries the ids to look up later and
// the error matches dispatcher.ErrPending.
func (n *Node) Invoke(ctx context.Context, req wire.InvocationRequest) (wire.Receipt, error) {
	if req.Credential == "" && req.Token == "" {
		req.Credential = wire.OwnerActor
	}
	return n.dispatch.Invoke(ctx, req)
}

// Mint mints a capability token of this deployment (as POST /api/tokens does),
// issued now by the node's clock, and returns it with its claims.
func (n *Node) Mint(req token.MintRequest) (string, token.Claims, error) {
	return n.minter.Mint(req, n.w.clock())
}

// Config is the configuration the node runs with: the one Start was given, with
// the defaults Start resolved (TokenKeyFile, TokenAudience). It is
// a copy; changing it changes nothing.
func (n *Node) Config() Config { return n.cfg }

// Registry holds this node's metrics (and the Go and process collectors), the
// registry its GET /metrics serves. Two nodes in one process count apart.
// Register a program's own collectors on it to serve them there too.
func (n *Node) Registry() *prometheus.Registry { return n.registry }

// Handler is the node's HTTP facade (REST, /mcp, /metrics and the console when
// it serves one), for a program that serves it on a server of its own.
func (n *Node) Handler() http.Handler { return n.srv.Handler() }

// Log is the node's event log: the streams every node of a deployment shares.
func (n *Node) Log() *eventlog.Log { return n.log }

// Projector is the node's fold of the log into its bbolt projection: what the
// directory, the receipts and the breakers read.
func (n *Node) Projector() *projector.Projector { return n.proj }

// Dispatcher is the node's dispatch service: its workers take invocation
// requests from the log and write their receipts.
func (n *Node) Dispatcher() *dispatcher.Service { return n.dispatch }

// MCP is the MCP server the facade serves at /mcp.
func (n *Node) MCP() *mcp.Handler { return n.mcpServer }

// Verifier checks this deployment's capability tokens for the gate (one per
// node; it caches what it verified).
func (n *Node) Verifier() *token.Verifier { return n.verifier }
