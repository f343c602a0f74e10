// Package gate holds the ordered checks every invocation request passes before any
// runner runs, whatever entry point it came through (HTTP, the CLI, a client on
// the NATS bus). The enforcement point is the dispatcher's worker, which calls
// [Gate.Check] with the request and what its projection holds for the key; each
// check either lets the request through or refuses it with a receipt status and
// the literal reason the caller sees. The order is the list in check.go.
//
// A refusal is never an error of the gate: it becomes a receipt with ran:false,
// written like any other. The one exception is the last check, the watcher
// (watcher.go): a refusal with Pending set holds a call to a sensitive row for
// the owner's approval, and gets its receipt once the call is decided.
package gate
