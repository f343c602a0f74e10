// Package client is a Go client of capdir's HTTP API: the directory (rows, import,
// export), dispatch (with the owner key, or a capability token and an arguments
// object), receipts, breakers, capability tokens (mint, revoke) and approvals, as
// typed methods over one base URL and the owner key. capdir's own CLI talks to a
// server through it.
//
// It stays light: the rows, receipts and reports it returns are api/answer's, of
// the standard library only (contract.Row and wire.Receipt are the same types), so
// it depends on neither NATS nor the JSON Schema compiler, nor on the server side
// (bbolt, prometheus, the projector, the dispatcher, the facade).
//
// Every answer outside 2xx is an *Error carrying the status, the server's "error"
// text and the whole body; a request that got no answer at all is a
// *TransportError. A Client is safe for concurrent use.
package client
