package command

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// Directory is the directory's write path: the one read-modify-append for rows,
// which the REST routes, the console, the importers and a Go program embedding
// capdir (Node.Directory) all call. It speaks no HTTP: each method returns a
// WriteResult or an error, a *KeyError matching one of ErrNotFound, ErrExists,
// ErrConflict, ErrPayloadTooLarge, ErrNotVisible, ErrUnavailable, or a contract
// error (a *contract.RefusalError for hygiene, a *contract.ValidationError for a
// field, contract.ErrNoRecognizedFields, …).
//
// A write reads the key's row and the sequence of its last mutation from the
// projection, builds the new row, checks its credential against the operator's
// allow-list and its size as the log stores it against the row limit, and appends
// exactly one DIRECTORY_MUTATE (actor wire.OwnerActor) expecting that sequence on
// the key's subject: when another writer got there first the
// append fails with ErrConflict and nothing is written, so no update is ever lost.
// It returns once the projection has applied the event, so the caller reads its own
// write; past the write timeout it returns ErrNotVisible together with the
// WriteResult of the write, which happened. A refused write appends nothing. Safe
// for concurrent use.
//
// The writes act as the owner: the caller decides who may call them.
type Directory struct {
	log     *eventlog.Log
	proj    *projector.Projector
	clock   func() time.Time
	timeout time.Duration // how long a write waits to become visible
	secrets runner.SecretEnv
	// rowLimit caps one row, as sent and as the log stores it (JSON escapes such as
	// \u003c for '<' can make it several times the size it was sent at).
	rowLimit int64
	check    RowChecker // nil: no warnings
	spoolDir string     // where an import's array is spooled
}

// warnings are the literals every call of row will fail with, for a write that
// succeeds all the same; nil when a call may run.
func (d *Directory) warnings(row *contract.Row) []string {
	if d.check == nil || row == nil {
		return nil
	}
	if err := d.check.CheckRow(row); err != nil {
		return []string{err.Error()}
	}
	return nil
}

// newDirectory is the Directory over cfg's log and projection. Its row limit is
// cfg.MaxRow, and what fits in one event of the log (its MaxData).
func newDirectory(cfg Config) *Directory {
	return &Directory{log: cfg.Log, proj: cfg.Projector, clock: cfg.Clock, timeout: cfg.WriteTimeout, secrets: cfg.SecretEnv,
		rowLimit: min(cfg.MaxRow, int64(cfg.Log.MaxData())), check: cfg.Check, spoolDir: cfg.ImportSpoolDir}
}

// RowLimit is the most bytes one row may have, as sent and as the log stores it:
// an entry point reads no more of a row's body than this.
func (d *Directory) RowLimit() int64 { return d.rowLimit }

// WriteResult is an accepted write.
type WriteResult struct {
	Key string
	// Action is the event's: contract.ActionCreate, ActionReplace, ActionPatch or
	// ActionDelete (a Replace or Upsert of an absent key creates it).
	Action string
	// Created: the key was absent and the write created it.
	Created bool
	// Row is the row after the write; nil after a delete.
	Row *contract.Row
	// Ignored names the fields a Patch ignored (outside the PATCH allow-list).
	Ignored []string
	// Warnings are the literals every call of Row will fail with as written
	// (ERR:fn:unknown_target:<name>, ERR:flow:bad_step:<text>, …): the row is
	// written all the same.
	Warnings []string
	// Seq is the event's sequence in the control stream.
	Seq uint64
}

// Create writes a new row (contract.Create: key and type required). A present key
// is ErrExists.
func (d *Directory) Create(ctx context.Context, f contract.Fields) (WriteResult, error) {
	return d.write(ctx, f.Values.Key, buildCreate(f))
}

// Replace writes the whole row of key (contract.Replace), creating it when absent
// (WriteResult.Created).
func (d *Directory) Replace(ctx context.Context, key string, f contract.Fields) (WriteResult, error) {
	return d.write(ctx, key, buildReplace(key, f))
}

// Patch changes the allow-listed fields of key's row (contract.Patch); the others
// come back in WriteResult.Ignored. An absent key is ErrNotFound.
func (d *Directory) Patch(ctx context.Context, key string, f contract.Fields) (WriteResult, error) {
	return d.write(ctx, key, buildPatch(key, f))
}

// Delete removes key's row. An absent key is ErrNotFound.
func (d *Directory) Delete(ctx context.Context, key string) (WriteResult, error) {
	return d.write(ctx, key, buildDelete(key))
}

// Upsert is an import row in upsert mode: Create when the key is absent, else
// Replace.
func (d *Directory) Upsert(ctx context.Context, f contract.Fields) (WriteResult, error) {
	return d.write(ctx, f.Values.Key, buildUpsert(f.Values.Key, f))
}

// dirBuild decides what a write does to one key, given the row as projected now
// (nil when the key is absent). It returns the mutation to append and the body
// fields it ignored, or an error; it must not have side effects.
type dirBuild func(old *contract.Row, now time.Time) (contract.DirectoryMutation, []string, error)

// dirPending is a write that has been decided but not yet appended.
type dirPending struct {
	mutation contract.DirectoryMutation
	ignored  []string
	warnings []string
	existed  bool   // the key was present when the write was decided
	expect   uint64 // the key subject's last sequence the append requires
	event    wire.Event
}

func (p dirPending) result(seq uint64) WriteResult {
	return WriteResult{Key: p.mutation.Key, Action: p.mutation.Action, Created: !p.existed && p.mutation.Row != nil,
		Row: p.mutation.Row, Ignored: p.ignored, Warnings: p.warnings, Seq: seq}
}

// write runs one write to the end: prepare, append, wait until visible. A write
// refused as a miss (ErrNotFound), a present key (ErrExists) or a conflict
// (ErrConflict) may have been decided on this node's projection while it lagged
// the log (the key written through another node a moment before): when the log
// holds a later mutation of the key than the one the write read, the write waits
// until the projection has applied it and is decided and appended once more. A
// second refusal stands.
func (d *Directory) write(ctx context.Context, key string, build dirBuild) (WriteResult, error) {
	for again := true; ; again = false {
		p, err := d.prepare(key, build)
		var seq uint64
		if err == nil {
			seq, err = d.append(ctx, p)
		}
		if again && lagged(err) && d.behind(ctx, key, p.expect) {
			continue
		}
		if err != nil {
			return WriteResult{}, WithKey(key, err)
		}
		return p.result(seq), WithKey(key, d.visible(ctx, seq, 1))
	}
}

// Row reads key's row (with row_num) and the sequence of its last mutation, as
// Projector.Row does; a miss is answered only once the projection has applied
// the key's last mutation in the log (see behind). Errors name the key (a
// *KeyError): ErrNotFound, or ErrUnavailable when the projection cannot be read.
// The key is not validated: a key no row can have is not found.
func (d *Directory) Row(ctx context.Context, key string) (contract.Row, uint64, error) {
	row, seq, err := d.proj.Row(key)
	if errors.Is(err, projector.ErrNotFound) && d.behind(ctx, key, seq) {
		row, seq, err = d.proj.Row(key)
	}
	switch {
	case errors.Is(err, projector.ErrNotFound):
		return row, seq, WithKey(key, ErrNotFound)
	case err != nil:
		return row, seq, WithKey(key, Unavailable(err))
	}
	return row, seq, nil
}

// lagged reports whether err is a refusal a lagging projection may have caused.
func lagged(err error) bool {
	return errors.Is(err, ErrNotFound) || errors.Is(err, ErrExists) || errors.Is(err, ErrConflict)
}

// behind reports whether the log holds a later mutation of key than read (the
// sequence a read of the projection gave), and the projection has applied it
// now; it waits at most the write timeout. A key the log has nothing newer of
// costs one round trip to the log.
func (d *Directory) behind(ctx context.Context, key string, read uint64) bool {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	seq, err := d.proj.SettleKey(ctx, key)
	return err == nil && seq != read
}

// prepare reads key and runs build, then checks the row's credential against the
// operator's allow-list. Errors: a *contract.ValidationError for a bad key or a
// variable rows may not read, build's error, ErrPayloadTooLarge for a row too large
// for the log, or ErrUnavailable.
func (d *Directory) prepare(key string, build dirBuild) (dirPending, error) {
	if err := contract.ValidateKey(key); err != nil {
		return dirPending{}, err
	}
	old, seq, err := d.proj.Row(key)
	var oldp *contract.Row
	switch {
	case err == nil:
		oldp = &old
	case errors.Is(err, projector.ErrNotFound):
	default:
		return dirPending{}, Unavailable(err)
	}
	m, ignored, err := build(oldp, d.clock())
	if err != nil {
		return dirPending{expect: seq}, err // the sequence read, for write's second look
	}
	if m.Row != nil {
		if err := checkSecretEnv(d.secrets, m.Row.Auth); err != nil {
			return dirPending{}, err
		}
	}
	ev, err := d.log.NewEvent(wire.TypeDirectoryMutate, wire.OwnerActor, m)
	if err != nil {
		return dirPending{}, Unavailable(err)
	}
	if n := int64(len(ev.Data)); n > d.rowLimit {
		return dirPending{}, fmt.Errorf("%w: the row is %d bytes as the log stores it (JSON escapes such as \\u003c for '<' count); the limit is %d", ErrPayloadTooLarge, n, d.rowLimit)
	}
	return dirPending{mutation: m, ignored: ignored, warnings: d.warnings(m.Row), existed: oldp != nil, expect: seq, event: ev}, nil
}

// append appends p and returns its stream sequence. Errors: ErrConflict, or
// ErrUnavailable.
func (d *Directory) append(ctx context.Context, p dirPending) (uint64, error) {
	seq, err := d.log.Append(ctx, wire.DirectorySubject(p.mutation.Key), p.event, eventlog.ExpectLastSubjectSeq(p.expect))
	return seq, classifyAppend(err)
}

// appendAsync starts appending p; resolve the future with awaitAsync.
func (d *Directory) appendAsync(p dirPending) (*eventlog.Pending, error) {
	f, err := d.log.AppendAsync(wire.DirectorySubject(p.mutation.Key), p.event, eventlog.ExpectLastSubjectSeq(p.expect))
	if err != nil {
		return nil, classifyAppend(err)
	}
	return f, nil
}

// awaitAsync waits for an appendAsync's acknowledgement, at most the write timeout.
func (d *Directory) awaitAsync(ctx context.Context, f *eventlog.Pending) (uint64, error) {
	seq, err := eventlog.AwaitAckWithin(ctx, f, d.timeout)
	return seq, classifyAppend(err)
}

// visible waits until the projection has applied the control stream up to seq, so
// that the caller reads its own write. It waits at most the write timeout times
// scale (at least 1).
func (d *Directory) visible(ctx context.Context, seq uint64, scale int) error {
	ctx, cancel := context.WithTimeout(ctx, d.timeout*time.Duration(max(scale, 1)))
	defer cancel()
	err := d.proj.WaitFor(ctx, wire.ControlStream, seq)
	if errors.Is(err, projector.ErrLogBehind) {
		return NewError(ErrUnavailable, "directory unavailable: %w", err) // it will not become visible
	}
	if err != nil {
		return fmt.Errorf("%w: sequence %d of %s (%v); it will be visible once the projector catches up",
			ErrNotVisible, seq, wire.ControlStream, err)
	}
	return nil
}

// classifyAppend classifies an append's error: a conflict stays a conflict, a full
// disk and an election say so themselves, anything else means the log is
// unavailable. (The log counts every append itself.)
func classifyAppend(err error) error {
	if err == nil || errors.Is(err, ErrConflict) || errors.Is(err, eventlog.ErrDiskFull) || errors.Is(err, eventlog.ErrElecting) {
		return err
	}
	return Unavailable(err)
}

// The builders: what each kind of write does with the current row.

// buildCreate is a POST: contract.Create, refused with ErrExists when the key is
// present.
func buildCreate(f contract.Fields) dirBuild {
	return func(old *contract.Row, now time.Time) (contract.DirectoryMutation, []string, error) {
		if old != nil {
			return contract.DirectoryMutation{}, nil, ErrExists
		}
		row, err := contract.Create(f, now)
		if err != nil {
			return contract.DirectoryMutation{}, nil, err
		}
		return contract.DirectoryMutation{Action: contract.ActionCreate, Key: row.Key, Row: &row}, nil, nil
	}
}

// buildReplace is a PUT: contract.Replace, which creates the row when it is absent
// (the event's action is then create).
func buildReplace(key string, f contract.Fields) dirBuild {
	return func(old *contract.Row, now time.Time) (contract.DirectoryMutation, []string, error) {
		row, err := contract.Replace(key, old, f, now)
		if err != nil {
			return contract.DirectoryMutation{}, nil, err
		}
		action := contract.ActionReplace
		if old == nil {
			action = contract.ActionCreate
		}
		return contract.DirectoryMutation{Action: action, Key: key, Row: &row}, nil, nil
	}
}

// buildUpsert is an import row in upsert mode: Create when absent, else Replace.
func buildUpsert(key string, f contract.Fields) dirBuild {
	create, replace := buildCreate(f), buildReplace(key, f)
	return func(old *contract.Row, now time.Time) (contract.DirectoryMutation, []string, error) {
		if old == nil {
			return create(nil, now)
		}
		return replace(old, now)
	}
}

// buildPatch is a PATCH: contract.Patch of a present row.
func buildPatch(key string, f contract.Fields) dirBuild {
	return func(old *contract.Row, now time.Time) (contract.DirectoryMutation, []string, error) {
		if old == nil {
			return contract.DirectoryMutation{}, nil, ErrNotFound
		}
		row, ignored, err := contract.Patch(*old, f, now)
		if err != nil {
			return contract.DirectoryMutation{}, ignored, err
		}
		return contract.DirectoryMutation{Action: contract.ActionPatch, Key: key, Row: &row}, ignored, nil
	}
}

// buildDelete is a DELETE of a present row.
func buildDelete(key string) dirBuild {
	return func(old *contract.Row, _ time.Time) (contract.DirectoryMutation, []string, error) {
		if old == nil {
			return contract.DirectoryMutation{}, nil, ErrNotFound
		}
		return contract.DirectoryMutation{Action: contract.ActionDelete, Key: key}, nil, nil
	}
}
