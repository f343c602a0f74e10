// Package mcp is capdir's MCP server: the directory projected as Model Context
// Protocol tools over streamable HTTP (github.com/modelcontextprotocol/go-sdk),
// mounted by the HTTP facade at /mcp.
//
// Every request carries a credential: the owner key (x-terminal-key) or a
// capability token (Authorization: Bearer), checked as POST /api/dispatch checks
// it; without one, or with one that does not hold, the answer is 401 with the
// literal reason and nothing is read or appended. A session keeps the credential
// that opened it (another one is 403), because its tool list is computed for it.
//
// In tools mode (/mcp) each session has a server of its own listing the rows its
// credential may call: enabled, planner_visible, within a token's scope and risk
// ceiling, in planner order (planner_rank, then the canonical order). A tool is
// named by the row key, described by the docstring's WHAT and WHEN_TO_USE, and
// takes the row's input_schema or a single "args" string (runner.ToolOf,
// the tools an agent row offers a model). tools/call builds the request the HTTP
// facade builds for the same credential (a schema row's arguments object as the
// request's arguments object, as POST /api/dispatch sends an object body) and calls the dispatcher, so it passes
// the same gate and leaves the same receipt; its result carries the invocation
// id, and a refusal or an ERR: result is a tool error whose text is the literal.
// A tools/call of an open session is answered on its own POST with one
// application/json response, decoded and dispatched in the request's goroutine
// (fast.go); the SDK serves everything else: sessions, initialize, tools/list,
// notifications, streams and any request that path does not take.
// Run follows the directory: a change to what a session is offered is applied to
// its server and announced with notifications/tools/list_changed.
//
// In search mode (/mcp?mode=search) a session lists three tools, search,
// describe and call, whatever the size of the directory. Config.Search ranks
// rows for search (WordMatch by default).
//
// # Caveats
//
//   - tools/list answers in one page, so that it can be in planner order: on a
//     large directory use search mode.
//   - A session ends after Config.SessionIdle without a request (an open stream
//     of notifications is not a request), and a token holder's when its token
//     expires or is found revoked; the client opens a new one. One credential
//     holds at most Config.MaxSessions sessions: the next ends its idlest one.
//   - The directory watcher cannot be removed from the projector: a Handler is
//     built once per node.
package mcp
