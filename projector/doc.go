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
//   - Breaker resets live on the data stream next to the receipts they interleave
//     with, so the fold sees them in the same order live and on replay.
package projector
