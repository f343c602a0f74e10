// Package bench measures capdir end to end on one machine: the raw JetStream
// publish floor, fn invocations through the NATS request subject, through
// POST /api/dispatch and through MCP tools/call (the official Go SDK's client over
// streamable HTTP), an http row against a local upstream, a three-step fn flow
// against one fn call, replaying the log into a fresh bbolt file, and a 100k-row
// directory. capdir bench prints its results as a
// table; the go test benchmarks in this package and in projector run the same
// scenario code.
//
// Every scenario warms up before it measures, runs in this process against an
// embedded NATS server whose store lives in a temporary directory, and returns
// structured [Result]s. Throughput rows carry their ratio to the raw async publish
// rate measured on the same store in the same run, which is the ceiling any
// log-backed operation can reach on this machine.
//
// # Caveats
//
// Load generators, the server and capdir share the machine's cores: on a small
// machine the client's own cost is part of every figure. The http scenario therefore
// measures 64 callers twice: with net/http's client, whose connection goroutines
// and per-request allocations take a noticeable share of the CPU, and with a lean
// keep-alive client (one prebuilt request, one read per answer, as wrk-style load
// tools do), which leaves more of the machine to the server. Latency percentiles are
// closed-loop (each caller waits for its answer before sending the next), so they
// do not include queueing delay an open-loop load would show.
package bench
