// Package mcptools turns the tool list of an upstream MCP server into rows of
// runner mcp for the directory import: one row per tool, target
// "<upstream>/<tool>", input_schema from the tool's inputSchema, the docstring
// from its description. A tool the row format cannot hold is refused with the
// reason, never dropped silently.
package mcptools

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capdir/capdir/api/importer"
	"github.com/capdir/capdir/contract"
)

// DefaultMaxTools bounds the tools one upstream may bring: those past it are
// refused, each with the reason.
const DefaultMaxTools = 1000

// Source is the import source of upstream's rows (their SOURCE line): a sync
// replaces and prunes only the rows it names.
func Source(upstream string) string { return fmt.Sprintf("mcp upstream=%q", upstream) }

// Items maps tools onto rows of runner mcp for upstream, at most max of them
// (DefaultMaxTools when max <= 0).
func Items(upstream string, tools []*mcp.Tool, max int) []importer.Item {
	if max <= 0 {
		max = DefaultMaxTools
	}
	items := make([]importer.Item, 0, len(tools))
	byKey := map[string]string{}
	for i, t := range tools {
		if i >= max {
			items = append(items, importer.Item{Source: shownName(t.Name), Refused: overMax(max)})
			continue
		}
		it := item(upstream, t)
		if other, ok := byKey[it.Key]; ok && it.Row != nil {
			it.Row, it.Notes, it.Refused = nil, nil, keyTaken(it.Key, other)
		} else if it.Row != nil {
			byKey[it.Key] = t.Name
		}
		items = append(items, it)
	}
	return items
}

// Disown refuses each item of upstream whose key falls under the prefix of
// another upstream of others as long as upstream's or longer ("UP_X_" for
// "up_x", which "up" reaches with a tool named "x_pay"), or is that prefix's
// bare key (UP_X, which up_x's tool "_" maps to): an upstream's tool
// can never take the key of another's, whichever syncs first, and two names
// that differ only in case (one key prefix) both keep out of it. A refused
// item names no key, so the row upstream made under it before is pruned.
func Disown(items []importer.Item, upstream string, others []string) []importer.Item {
	own := keyPrefix(upstream)
	for i, it := range items {
		if it.Row == nil {
			continue
		}
		for _, o := range others {
			prefix := keyPrefix(o)
			if o != upstream && len(prefix) >= len(own) && (strings.HasPrefix(it.Key, prefix+"_") || it.Key == prefix) {
				items[i] = importer.Item{Source: it.Source, Refused: keyOfOther(it.Key, prefix, o)}
				break
			}
		}
	}
	return items
}

// keyPrefix is what the keys of upstream's tools start with, before their "_":
// the upstream's name as importer.Key makes it ("UP_X" for "up__x" or "up_x_").
func keyPrefix(upstream string) string { return importer.Key(upstream, "") }

func item(upstream string, t *mcp.Tool) importer.Item {
	if why := nameProblem(t.Name); why != "" {
		return importer.Item{Source: shownName(t.Name), Refused: why}
	}
	it := importer.Item{Source: t.Name, Key: importer.Key(upstream+"_", t.Name)}
	if err := contract.ValidateKey(it.Key); err != nil {
		it.Refused = "the tool name maps to no valid key: " + err.Error()
		return it
	}
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil {
		schema = []byte(`{"type":"object"}`)
	}
	if _, err := contract.CompileSchema(string(schema)); err != nil {
		it.Refused = "capdir cannot compile the tool's inputSchema: " + err.Error()
		return it
	}
	it.Row = &contract.Row{
		Key: it.Key, Type: contract.TypeFn, Runner: "mcp", Target: upstream + "/" + t.Name,
		Content: docstring(t) + "\n" + importer.SourceLine(Source(upstream), t.Name), InputSchema: string(schema),
	}
	if a := t.Annotations; a != nil && !a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint) {
		it.Notes = append(it.Notes, "the tool says it is destructive (destructiveHint): mark the row sensitive so its calls wait for approval")
	}
	return it
}

// docstring is the row's content: # WHAT: from the description (or the title,
// or the name), on one line.
func docstring(t *mcp.Tool) string {
	what := t.Description
	if what == "" {
		what = t.Title
	}
	if what == "" {
		what = "The " + t.Name + " tool."
	}
	return "# WHAT: " + strings.Join(strings.Fields(what), " ")
}
