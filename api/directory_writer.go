package api

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/projector"
	"github.com/nats-io/nats.go/jetstream"
)

// dirBuild decides what a write does to one key, given the row as projected now
// (nil when the key is absent). It returns the mutation to append and the body
// fields it ignored, or an error; it must not have side effects.
type dirBuild func(old *contract.Row, now time.Time) (eventlog.DirectoryMutation, []string, error)

// dirWriter is the one read-modify-append path for directory rows, used by every
// directory route and by the import. A write reads the key's row and the sequence of
// its last mutation from the projection, builds the new row, and appends exactly one
// DIRECTORY_MUTATE expecting that sequence on the key's subject: when another writer
// got there first the append fails with eventlog.ErrConflict and nothing is written,
// so no update is ever lost. Safe for concurrent use.
type dirWriter struct {
	log     *eventlog.Log
	proj    *projector.Projector
	clock   func() time.Time
	timeout time.Duration // how long a write waits to become visible
	secrets runner.SecretEnv
	// rowLimit caps the row as the log stores it (JSON escapes such as \u003c for
	// '<' can make it several times the size it was sent at).
	rowLimit int64
}

// dirPending is a write that has been decided but not yet appended.
type dirPending struct {
	mutation eventlog.DirectoryMutation
	ignored  []string
	existed  bool   // the key was present when the write was decided
	expect   uint64 // the key subject's last sequence the append requires
	event    eventlog.Event
}

// prepare reads key and runs build, then checks the row's credential against the
// operator's allow-list. Errors: a *contract.ValidationError for a bad key or a
// variable rows may not read, build's error, errPayloadTooLarge for a row too large
// for the log, or errDirUnavailable.
func (w *dirWriter) prepare(key string, build dirBuild) (dirPending, error) {
	if err := contract.ValidateKey(key); err != nil {
		return dirPending{}, err
	}
	old, seq, err := w.proj.Row(key)
	var oldp *contract.Row
	switch {
	case err == nil:
		oldp = &old
	case errors.Is(err, projector.ErrNotFound):
	default:
		return dirPending{}, fmt.Errorf("%w: %v", errDirUnavailable, err)
	}
	m, ignored, err := build(oldp, w.clock())
	if err != nil {
		return dirPending{}, err
	}
	if m.Row != nil {
		if err := checkSecretEnv(w.secrets, m.Row.Auth); err != nil {
			return dirPending{}, err
		}
	}
	ev, err := w.log.NewEvent(eventlog.TypeDirectoryMutate, OwnerActor, m)
	if err != nil {
		return dirPending{}, fmt.Errorf("%w: %v", errDirUnavailable, err)
	}
	if n := int64(len(ev.Data)); n > w.rowLimit {
		return dirPending{}, fmt.Errorf("%w: the row is %d bytes as the log stores it (JSON escapes such as \\u003c for '<' count); the limit is %d", errPayloadTooLarge, n, w.rowLimit)
	}
	return dirPending{mutation: m, ignored: ignored, existed: oldp != nil, expect: seq, event: ev}, nil
}

// append appends p and returns its stream sequence. Errors: eventlog.ErrConflict, or
// errDirUnavailable.
func (w *dirWriter) append(ctx context.Context, p dirPending) (uint64, error) {
	seq, err := w.log.Append(ctx, eventlog.DirectorySubject(p.mutation.Key), p.event, eventlog.ExpectLastSubjectSeq(p.expect))
	return seq, classifyAppend(err)
}

// appendAsync starts appending p; resolve the future with awaitAsync.
func (w *dirWriter) appendAsync(p dirPending) (jetstream.PubAckFuture, error) {
	f, err := w.log.AppendAsync(eventlog.DirectorySubject(p.mutation.Key), p.event, eventlog.ExpectLastSubjectSeq(p.expect))
	if err != nil {
		return nil, classifyAppend(err)
	}
	return f, nil
}

// awaitAsync waits for an appendAsync's acknowledgement, at most the write timeout.
func (w *dirWriter) awaitAsync(ctx context.Context, f jetstream.PubAckFuture) (uint64, error) {
	seq, err := eventlog.AwaitAckWithin(ctx, f, w.timeout)
	return seq, classifyAppend(err)
}

// visible waits until the projection has applied the control stream up to seq, so
// that the caller reads its own write. It waits at most the write timeout times
// scale (at least 1).
func (w *dirWriter) visible(ctx context.Context, seq uint64, scale int) error {
	ctx, cancel := context.WithTimeout(ctx, w.timeout*time.Duration(max(scale, 1)))
	defer cancel()
	err := w.proj.WaitFor(ctx, eventlog.ControlStream, seq)
	if errors.Is(err, projector.ErrLogBehind) {
		return fmt.Errorf("%w: %w", errDirUnavailable, err) // it will not become visible
	}
	if err != nil {
		return fmt.Errorf("%w: sequence %d of %s (%v); it will be visible once the projector catches up",
			errDirNotVisible, seq, eventlog.ControlStream, err)
	}
	return nil
}

// write runs one write to the end: prepare, append, wait until visible.
func (w *dirWriter) write(ctx context.Context, key string, build dirBuild) (dirPending, error) {
	p, err := w.prepare(key, build)
	if err != nil {
		return dirPending{}, err
	}
	seq, err := w.append(ctx, p)
	if err != nil {
		return dirPending{}, err
	}
	return p, w.visible(ctx, seq, 1)
}

// classifyAppend classifies an append's error: a conflict stays a conflict, anything
// else means the log is unavailable. (The log counts every append itself.)
func classifyAppend(err error) error {
	if err == nil || errors.Is(err, eventlog.ErrConflict) {
		return err
	}
	return fmt.Errorf("%w: %v", errDirUnavailable, err)
}

// The builders: what each kind of write does with the current row.

// buildCreate is a POST: contract.Create, refused with errDirExists when the key is
// present.
func buildCreate(f contract.Fields) dirBuild {
	return func(old *contract.Row, now time.Time) (eventlog.DirectoryMutation, []string, error) {
		if old != nil {
			return eventlog.DirectoryMutation{}, nil, errDirExists
		}
		row, err := contract.Create(f, now)
		if err != nil {
			return eventlog.DirectoryMutation{}, nil, err
		}
		return eventlog.DirectoryMutation{Action: eventlog.ActionCreate, Key: row.Key, Row: &row}, nil, nil
	}
}

// buildReplace is a PUT: contract.Replace, which creates the row when it is absent
// (the event's action is then create).
func buildReplace(key string, f contract.Fields) dirBuild {
	return func(old *contract.Row, now time.Time) (eventlog.DirectoryMutation, []string, error) {
		row, err := contract.Replace(key, old, f, now)
		if err != nil {
			return eventlog.DirectoryMutation{}, nil, err
		}
		action := eventlog.ActionReplace
		if old == nil {
			action = eventlog.ActionCreate
		}
		return eventlog.DirectoryMutation{Action: action, Key: key, Row: &row}, nil, nil
	}
}

// buildUpsert is an import row in upsert mode: Create when absent, else Replace.
func buildUpsert(key string, f contract.Fields) dirBuild {
	create, replace := buildCreate(f), buildReplace(key, f)
	return func(old *contract.Row, now time.Time) (eventlog.DirectoryMutation, []string, error) {
		if old == nil {
			return create(nil, now)
		}
		return replace(old, now)
	}
}

// buildPatch is a PATCH: contract.Patch of a present row.
func buildPatch(key string, f contract.Fields) dirBuild {
	return func(old *contract.Row, now time.Time) (eventlog.DirectoryMutation, []string, error) {
		if old == nil {
			return eventlog.DirectoryMutation{}, nil, errDirNotFound
		}
		row, ignored, err := contract.Patch(*old, f, now)
		if err != nil {
			return eventlog.DirectoryMutation{}, ignored, err
		}
		return eventlog.DirectoryMutation{Action: eventlog.ActionPatch, Key: key, Row: &row}, ignored, nil
	}
}

// buildDelete is a DELETE of a present row.
func buildDelete(key string) dirBuild {
	return func(old *contract.Row, _ time.Time) (eventlog.DirectoryMutation, []string, error) {
		if old == nil {
			return eventlog.DirectoryMutation{}, nil, errDirNotFound
		}
		return eventlog.DirectoryMutation{Action: eventlog.ActionDelete, Key: key}, nil, nil
	}
}
