package projector

import (
	"context"
	"fmt"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// The history queries read the control stream itself, not the projection: a
// row's history is the events on its directory subject, and the directory at a
// point in time is a fold of the directory's events up to it into memory. The
// live projection is neither read nor disturbed. Only the events the fold folds
// count (the fold-time checks of check.go), so the directory at the log's last
// sequence is the live projection's.

// Point is a place in the control stream: a sequence (Seq), a time (the last
// event appended at or before Time), or its start (Start: before the first
// event, where the directory is empty). The zero Point is the log's end.
type Point struct {
	Seq   uint64
	Time  time.Time
	Start bool
}

// includes reports whether the event at seq, appended at at, is at or before p.
func (p Point) includes(seq uint64, at time.Time) bool {
	switch {
	case p.Start:
		return false
	case p.Seq > 0:
		return seq <= p.Seq
	case !p.Time.IsZero():
		return !at.After(p.Time)
	}
	return true
}

// History is every mutation of key in log order, also after the row was deleted.
// A key that never had a mutation has an empty history, not an error.
func (p *Projector) History(ctx context.Context, key string) ([]contract.Change, error) {
	if p.cfg.Log == nil {
		return nil, ErrNoLog
	}
	out := []contract.Change{}
	var prev *contract.Row
	err := p.cfg.Log.ReadSubject(ctx, wire.ControlStream, wire.DirectorySubject(key), func(s eventlog.Stored) error {
		action, row, ok := foldable(&s, key)
		if !ok {
			return nil
		}
		out = append(out, change(&s, action, prev, row))
		prev = row
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("projector: history of %s: %w", key, err)
	}
	return out, nil
}

// RowAt is key's row as it stood at p, with the sequence of the mutation that
// made it; ErrNotFound when the row did not exist then. It reads key's history
// only, so it costs what the row's own changes cost; the row has no row_num.
func (p *Projector) RowAt(ctx context.Context, key string, at Point) (contract.Row, uint64, error) {
	if err := p.checkPoint(ctx, at); err != nil {
		return contract.Row{}, 0, err
	}
	h, err := p.History(ctx, key)
	if err != nil {
		return contract.Row{}, 0, err
	}
	i := len(h) - 1
	for i >= 0 && !at.includes(h[i].Seq, h[i].At) {
		i--
	}
	if i < 0 || h[i].Row == nil {
		return contract.Row{}, 0, ErrNotFound
	}
	return *h[i].Row, h[i].Seq, nil
}

// checkPoint refuses a sequence beyond the control stream's last one.
func (p *Projector) checkPoint(ctx context.Context, at Point) error {
	if p.cfg.Log == nil {
		return ErrNoLog
	}
	if at.Seq == 0 {
		return nil
	}
	last, err := p.cfg.Log.LastSeq(ctx, wire.ControlStream)
	if err != nil {
		return fmt.Errorf("projector: %w", err)
	}
	if at.Seq > last {
		return &BeyondLogError{Seq: at.Seq, LastSeq: last}
	}
	return nil
}

// foldable is s's action and the row after it, as the fold applies s to key
// (nil for a delete); false when the fold skips s.
func foldable(s *eventlog.Stored, key string) (string, *contract.Row, bool) {
	subj := wire.ParseSubject(s.Subject)
	if subj.Family != wire.DirectoryFamily || subj.Key != key {
		return "", nil, false
	}
	if _, err := checkEvent(s, subj); err != nil {
		return "", nil, false
	}
	m, err := checkMutation(s, key)
	if err != nil {
		return "", nil, false
	}
	if m.Action == contract.ActionDelete {
		return m.Action, nil, true
	}
	row := *m.Row
	row.RowNum = 0
	return m.Action, &row, true
}

// change describes s, an action that turned prev into row (either may be nil).
func change(s *eventlog.Stored, action string, prev, row *contract.Row) contract.Change {
	c := contract.Change{Seq: s.Seq, At: s.At, Actor: s.Actor, Action: action, Row: row, Fields: contract.Diff(prev, row)}
	old := ""
	if prev != nil {
		old = contract.Fingerprint(prev)
	}
	if row != nil {
		c.Fingerprint = contract.Fingerprint(row)
	}
	c.ContractChanged = old != c.Fingerprint
	return c
}

// ContractOf is the row receipt rc's call ran under, and the sequence of the
// mutation that wrote it: the row at rc's ContractSeq, or, for a receipt that
// does not record it, the row's last mutation at or before the call started.
// ErrNotFound when no row had the key then (a refusal of an unknown key).
func (p *Projector) ContractOf(ctx context.Context, rc *wire.Receipt) (contract.Row, uint64, error) {
	at := Point{Seq: rc.ContractSeq}
	if at.Seq == 0 {
		at.Time = rc.StartedAt
	}
	return p.RowAt(ctx, rc.Key, at)
}
