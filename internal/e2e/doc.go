// Package e2e holds the end-to-end tests of whole capdir nodes and clusters: real
// embedded or external NATS servers, real bbolt files, HTTP, MCP and bus clients
// over real connections, and local upstreams. Node fixtures are in
// internal/nodetest; the tests of the module root's own files stay beside them.
package e2e
