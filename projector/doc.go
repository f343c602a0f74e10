// Package projector folds capdir's event log into one bbolt file: the directory, the
// receipts, and every breaker. It is the read side of capdir.
//
// One goroutine follows each stream. Each batch of events is applied in one bbolt
// transaction together with that stream's checkpoint, so the checkpoint can never be
// ahead of the data or the data ahead of the checkpoint. The checkpoint is the
// projector's acknowledgement: events at or below it are skipped, so applying an
// event twice is harmless, and a restart resumes from it rather than from zero.
//
// Callers that wrote an event can wait until it is applied ([Projector.WaitFor]),
// which gives read-your-writes on top of an asynchronous fold.
//
// # Fold-time checks
//
// Nothing is believed because it claims so. Before it folds an event the projector
// checks it (check.go), and it folds only an event that passes:
//
//   - its type is one this version folds, and its subject is of that type's family
//     ([wire.ParseSubject]): DIRECTORY_MUTATE on capdir.ctl.dir.<KEY>,
//     INVOCATION_REQUESTED on capdir.data.req.<KEY> or capdir.data.bus.<CLIENT>.<KEY>,
//     RECEIPT on capdir.data.rcpt.<KEY> (or, in logs written before receipts shared
//     their row's subject, capdir.data.rcpt.<KEY>.<INVOCATION>, naming its
//     invocation), BREAKER_RESET on capdir.data.breaker.<KEY>, TOKEN_REVOKED on
//     capdir.ctl.token.<JTI>, APPROVAL_REQUESTED and APPROVAL_DECIDED on
//     capdir.ctl.approval.<INVOCATION> (approvals.go).
//     NATS permissions decide who may write which family (only capdir's own
//     connection writes rows, receipts and resets), so the family is who wrote it;
//   - its data decodes, and every key it names is its subject's key (a mutation's
//     key and its row's key, a receipt's key, a reset's key, a request's key when
//     it names one);
//   - a mutation's action is create, replace, patch or delete, it carries a row
//     unless it deletes, and the row's type is fn, http, agent or flow; a receipt
//     names its invocation; a bus client's request carries an invocation id the
//     dispatcher accepts ([wire.ValidInvocationID]), as it would drop any other unrun.
//
// Any other event is skipped: a warning names it (stream, sequence, subject, type,
// id) and why, never its data (no body, result or credential), it is counted in
// capdir_projector_events_skipped_total{stream,reason}, and the checkpoint moves
// past it like any other event, so one bad event never stalls the projector. A
// skipped event on a key's directory subject still records its sequence as the
// key's last: JetStream counts it, and the key's next write expects it.
//
// The rule for what is checked at fold time: fold-time checks are structural and
// stable across versions (who wrote it, decodable, key matches subject, known type).
// A write rule tightened later (hygiene, the nats runner's target rules, the secret
// variable allow-list, input_schema compilation, and whatever comes next) is
// enforced at the door, by the directory write path, and never at fold time. The
// log is kept forever and replayed by every later version: a rule checked at fold
// time would make an old log replay to a different directory than the one its
// owner used, would drop rows that were legal when written, and would make a
// version upgrade rewrite history. The checks above hold of every event any
// version of capdir has written, so they only ever drop forged or broken events.
// They are pure functions of the event and its subject, so a live projection and a
// replay of the same log (Rebuild) skip exactly the same events and have the same
// Digest.
//
// # Caveats
//
//   - By default bbolt commits without fsync: the log is the source of truth and the
//     projection can always be rebuilt from it. A process crash loses nothing (the
//     page cache survives it); after an operating-system crash the file is checked
//     on open and rebuilt from the log when it is inconsistent. Set Config.Sync to
//     fsync every batch instead.
//   - A damaged file is never served (damage.go). A clean Close seals the file (its
//     size and SHA-256 in <path>.sum), and Open compares the seal before bbolt reads
//     the file: any byte changed since, a value inside a row included, is found. A
//     file without a seal (an unclean stop, or a file an older version closed) must
//     open read-only, be as long as its meta page says, read back page by page, and
//     pass bbolt's check; a value changed inside such a file cannot be found. A
//     damaged file is set aside as <path>.corrupt and the projection folded again
//     from sequence 1 when the log holds every event; when retention has removed
//     some, Open refuses it with a [DamagedError] (matching [ErrDamaged]) naming the
//     file and capdir replay, rather than serve a shorter history. The seal costs a
//     read of the file at Close and at Open: about 0.25 s for a 179 MB projection of
//     100k rows and 200k invocation events, beside about 1.8 s for the rest of Open.
//   - row_num needs a rank over the canonical order, which bbolt cannot give; an
//     in-memory order index (keys and seq only) is rebuilt on open and kept in step
//     with every commit.
//   - A projection belongs to one log. Next to its checkpoints it records which
//     stream it folded (the stream's creation time). Before folding, while Run
//     follows (on every JetStream stream advisory and every Config.LogCheck) and
//     whenever a reader settles, it checks that the log still holds what it has
//     applied. A stream that ends before the checkpoint, is gone, or was deleted and
//     created again (by anyone holding the JetStream API, or by losing the log's
//     tail in a power loss) would otherwise hand out sequences the projection
//     believes it has applied, and their events would be skipped silently. Instead
//     the projector stops with a [LogBehindError] (matching [ErrLogBehind]) naming the
//     stream, the checkpoint and the log's last sequence; WaitFor and Settle return
//     it from then on. Restore the log, or rebuild the projection from the log as it
//     is ([Rebuild], capdir replay): the rebuilt projection records the new stream.
//     Retention removing old data events (the first sequence rising) is not a
//     mismatch. A purge that keeps a stream's last sequence is not detected.
//   - Breaker resets live on the data stream next to the receipts they interleave
//     with, so the fold sees them in the same order live and on replay.
package projector
