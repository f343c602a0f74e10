// Package mcprunner runs rows whose runner is mcp: a tools/call on a tool of an
// upstream MCP server, through the official Go SDK's client with one pooled
// session per upstream. A row names its upstream and tool in target
// ("<upstream>/<tool>"), never a URL or a command: where an upstream lives
// (a streamable HTTP endpoint with its credential headers, or a stdio command the
// operator configured) comes from the node's [Upstreams].
package mcprunner
