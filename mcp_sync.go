package capdir

import (
	"context"
	"time"

	"github.com/capdir/capdir/api/importer/mcptools"
	"github.com/capdir/capdir/command"
)

// DefaultMCPRelist is how often every upstream MCP server's tools are listed
// again when Config.MCPRelist is 0: a fallback for an upstream that changes its
// tools without sending notifications/tools/list_changed.
const DefaultMCPRelist = 5 * time.Minute

// mcpSync keeps the rows of each upstream MCP server in step with its tool list:
// on start, on every (re)connect, on notifications/tools/list_changed, when the
// owner registers, replaces or removes an upstream, and every relist interval,
// the upstream's tools are listed and imported as rows of runner mcp, replacing
// the rows that changed and deleting those of tools that are gone (only rows
// whose SOURCE line names that upstream); a tool that comes back gets its row
// again with the owner's columns of its last version (ImportItems). A row
// equal to the stored one appends nothing, so a list that did not change, or
// two nodes importing the same list, write nothing more. One upstream is
// listed at most once every mcpSyncGap (syncQueue).
type mcpSync struct {
	wake chan string // upstream names to list again; buffered, never blocks a sender
}

func newMCPSync() *mcpSync { return &mcpSync{wake: make(chan string, 64)} }

// poke asks for upstream's list again; it never blocks (a full queue already
// holds a request that will list it).
func (s *mcpSync) poke(upstream string) {
	select {
	case s.wake <- upstream:
	default:
	}
}

// relistEvery is the relist interval cfg asks for; 0 is never.
func relistEvery(cfg Config) time.Duration {
	switch {
	case cfg.MCPRelist < 0:
		return 0
	case cfg.MCPRelist == 0:
		return DefaultMCPRelist
	}
	return cfg.MCPRelist
}

// runMCPSync syncs every upstream once, then each one poked, and all of them
// every relist interval (none when every is 0), until ctx ends. The syncs run
// concurrently (see syncQueue): one upstream's slow, hung or failing sync
// delays or fails no other's. It returns once every sync has ended.
func (n *Node) runMCPSync(ctx context.Context, ups nodeUpstreams, every time.Duration) error {
	q := newSyncQueue(ctx, func(ctx context.Context, upstream string) { n.syncMCP(ctx, upstream, ups.Names()) })
	defer q.wait()
	for _, name := range ups.Names() {
		q.start(name)
	}
	var tick <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case name := <-n.mcpSync.wake:
			q.start(name)
		case <-tick:
			for _, name := range ups.Names() {
				q.start(name)
			}
		}
	}
}

// syncMCP imports upstream's tool list as its rows, none under the key prefix
// of another upstream of names with a name as long or longer (mcptools.Disown).
func (n *Node) syncMCP(ctx context.Context, upstream string, names []string) {
	tools, err := n.mcpRunner.Tools(ctx, upstream, mcptools.DefaultMaxTools)
	if err != nil {
		n.logger.Warn("mcp upstream: tools not listed; its rows stay as they are", "upstream", upstream, "err", err)
		return
	}
	items := mcptools.Disown(mcptools.Items(upstream, tools, mcptools.DefaultMaxTools), upstream, names)
	rep, err := n.srv.Directory().ImportItems(ctx, items, command.ItemsImport{Source: mcptools.Source(upstream), Prune: true})
	if err != nil {
		n.logger.Warn("mcp upstream: rows partly written", "upstream", upstream, "err", err)
	}
	for _, o := range rep.Items {
		if o.Error != "" {
			n.logger.Warn("mcp upstream: a tool is not a row", "upstream", upstream, "tool", o.Source, "key", o.Key, "why", o.Error)
		}
		if o.OwnerColumnsFrom > 0 {
			n.logger.Info("mcp upstream: a tool is back; its row keeps the owner's columns (enabled, sensitive, …) of its last version",
				"upstream", upstream, "tool", o.Source, "key", o.Key, "version_seq", o.OwnerColumnsFrom)
		}
	}
	n.logger.Info("mcp upstream: rows in step with its tools", "upstream", upstream, "tools", len(tools),
		"created", rep.Created, "updated", rep.Updated, "unchanged", rep.Unchanged, "refused", rep.Refused+rep.Failed, "pruned", len(rep.Pruned))
}
