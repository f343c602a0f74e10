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
// # Caveats
//
//   - By default bbolt commits without fsync: the log is the source of truth and the
//     projection can always be rebuilt from it. A process crash loses nothing (the
//     page cache survives it); after an operating-system crash the file is checked
//     on open and rebuilt from the log when it is inconsistent. Set Config.Sync to
//     fsync every batch instead.
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
