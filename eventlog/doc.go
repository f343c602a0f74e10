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
//   - A full disk: the embedded server answers nothing to an append its store cannot
//     write, and refuses every later one until JetStream restarts. The log learns of
//     it from the server's error line, refuses every append with ErrDiskFull from
//     then on (those waiting for an answer included), and restarts JetStream itself
//     once the store's disk has DiskRoom free. An async append in flight then waits
//     for its AckTimeout unless its caller watches Log.Full.
//   - An append no server answers (no stream leader: an election) is sent again for
//     Config.ElectionWait, then refused with ErrElecting; one whose connection was
//     lost before its answer is sent again, the same, where it carries its event id
//     as Nats-Msg-Id, and an async one is refused with ErrConnectionLost for its
//     caller to send again. An append WithoutDedupe is never sent again.
package eventlog
