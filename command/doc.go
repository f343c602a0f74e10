// Package command is capdir's command side: every change the owner makes, and the
// checks it passes, in one place that every entry point calls. The HTTP facade's
// REST routes (package api), the owner's console (api/console), the importers
// (an import body of rows, an OpenAPI document, an upstream MCP server's tools)
// and a Go program embedding capdir all decode what they were given, call a
// method here, and encode its answer; none of them appends to the log itself.
//
//   - Directory is the directory's write path: read the key's row and the
//     sequence of its last mutation, build the new row (contract.Create,
//     Replace, Patch), check it (hygiene, the operator's secret allow-list, the
//     row limit as the log stores it), append one DIRECTORY_MUTATE expecting
//     that sequence, and wait until the projection has applied it, so the caller
//     reads its own write. Its imports (ImportRows, ImportItems, ImportOpenAPI)
//     write many rows through the same checks.
//   - Tokens mints capability tokens and revokes them (TOKEN_REVOKED).
//   - Approvals lists the calls the watcher held and carries out the owner's
//     decisions on them.
//
// The package speaks no HTTP: its answers are values and errors, matched with
// errors.Is against the sentinels of errors.go, and Message is the literal a
// user sees for each. Every write acts as the owner (wire.OwnerActor): the entry
// point decides who may call it.
package command
