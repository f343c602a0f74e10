// Package eventlog is capdir's append-only log: the event envelope, the two JetStream
// streams and their subjects, append with optimistic concurrency and dedupe, ordered
// reads, and starting an embedded NATS server or connecting to an external cluster.
//
// # Streams and subjects
//
// The control stream (CAPDIR_CONTROL, subjects capdir.ctl.>) holds directory mutations
// and other owner decisions and is kept forever. The data stream (CAPDIR_DATA, subjects
// capdir.data.>) holds invocation requests, receipts and breaker resets (a breaker is a
// fold over receipts and resets, so they share one total order); its retention is
// configurable. Every subject ends with the row key, so JetStream's
// per-subject ordering and Nats-Expected-Last-Subject-Sequence give per-key ordering
// and optimistic concurrency without any lock in capdir.
//
// # Envelope
//
// Every message is a JSON [wire.Event]: {id, type, at, actor, data}. The id is a ULID and is
// also sent as Nats-Msg-Id, so a retried append inside the stream's duplicate window is
// stored once.
//
// # Caveats
//
//   - Keys must be subject-safe ([A-Za-z0-9_-]); [Subject] functions do not re-check.
//   - Dedupe by Nats-Msg-Id holds for the stream's duplicate window (two minutes by
//     default); beyond it the consumers of the log must be idempotent themselves.
//   - The embedded server locks its store directory: two processes cannot open the
//     same data dir at once. Use an external NATS cluster (--nats-url) to share a log.
package eventlog
