package projector

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// Snapshot is the directory as it stood at one point of the control stream,
// folded from the log into memory. It is read-only and safe for concurrent use.
// The rows it took from a kept snapshot stay undecoded until they are read.
type Snapshot struct {
	// Seq is the last control-stream sequence the snapshot includes.
	Seq  uint64
	rows map[string]snapRow
	// order is the keys in canonical order.
	order []string
}

// rewindBatch is how many events a rewind takes from the log at a time.
const rewindBatch = 4096

var errRewound = errors.New("rewound")

// DirectoryAt folds the control stream's directory events up to at into a
// Snapshot. A sequence beyond the log is refused (ErrBeyondLog); a time after the
// last event gives the directory as it stands now; the log's start (or a time
// before its first event), the empty directory at sequence 0.
func (p *Projector) DirectoryAt(ctx context.Context, at Point) (*Snapshot, error) {
	if err := p.checkPoint(ctx, at); err != nil {
		return nil, err
	}
	if at.Start {
		return &Snapshot{rows: map[string]snapRow{}, order: []string{}}, nil
	}
	last, err := p.cfg.Log.LastSeq(ctx, wire.ControlStream)
	if err != nil {
		return nil, fmt.Errorf("projector: %w", err)
	}
	to := last
	if at.Seq > 0 {
		to = at.Seq
	}
	snap := &Snapshot{rows: map[string]snapRow{}}
	if at.Seq > 0 {
		if kept := p.keptRewind(to); kept != nil && kept.Seq == to {
			return kept, nil
		} else if kept != nil {
			snap.Seq, snap.rows = kept.Seq, maps.Clone(kept.rows)
		}
	}
	// The nearest kept snapshot at or before the point, when it is nearer than the
	// last rewind; without one (none kept yet, or one damaged), the log from its start.
	if s := p.keptSnapshot(at, to); s != nil && s.Seq > snap.Seq {
		snap = s
	}
	err = p.cfg.Log.ReadRange(ctx, wire.ControlStream, snap.Seq+1, to, rewindBatch, func(b []eventlog.Stored) error {
		for i := range b {
			s := &b[i]
			if s.Seq > to || !at.includes(s.Seq, s.At) {
				return errRewound
			}
			snap.Seq = s.Seq
			snap.apply(s)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errRewound) {
		return nil, fmt.Errorf("projector: directory at %d: %w", to, err)
	}
	snap.sort()
	if at.Seq > 0 {
		p.rewindMu.Lock()
		p.lastRewind = snap
		p.rewindMu.Unlock()
	}
	return snap, nil
}

// keptRewind is the last rewind when it is at or before seq, else nil.
func (p *Projector) keptRewind(seq uint64) *Snapshot {
	p.rewindMu.Lock()
	defer p.rewindMu.Unlock()
	if p.lastRewind == nil || p.lastRewind.Seq > seq {
		return nil
	}
	return p.lastRewind
}

// apply folds s into the snapshot as the fold folds it into the projection.
func (s *Snapshot) apply(ev *eventlog.Stored) {
	subj := wire.ParseSubject(ev.Subject)
	if subj.Family != wire.DirectoryFamily {
		return
	}
	_, row, ok := foldable(ev, subj.Key)
	switch {
	case !ok:
	case row == nil:
		delete(s.rows, subj.Key)
	default:
		s.rows[subj.Key] = snapRow{head: rowHead{Seq: row.Seq, Category: row.Category, Type: row.Type, Enabled: row.Enabled}, row: row}
	}
}

func (s *Snapshot) sort() {
	entries := make([]indexEntry, 0, len(s.rows))
	for k, r := range s.rows {
		entries = append(entries, indexEntry{key: k, seq: r.head.Seq})
	}
	slices.SortFunc(entries, compareEntries)
	s.order = make([]string, len(entries))
	for i := range entries {
		s.order[i] = entries[i].key
	}
}

// Len is the number of rows in the snapshot.
func (s *Snapshot) Len() int { return len(s.order) }

// Row is key's row in the snapshot with its row_num, or ErrNotFound.
func (s *Snapshot) Row(key string) (contract.Row, error) {
	sr, ok := s.rows[key]
	if !ok {
		return contract.Row{}, ErrNotFound
	}
	r, err := sr.decode()
	if err != nil {
		return contract.Row{}, err
	}
	r.RowNum = slices.Index(s.order, key) + 1
	return r, nil
}

// matching calls fn with the place (0-based) and key of every row f matches, in
// canonical order, without decoding them, and stops at fn's first error.
func (s *Snapshot) matching(f Filter, fn func(i int, sr *snapRow) error) error {
	for i, k := range s.order {
		sr := s.rows[k]
		if !f.match(&contract.Row{Category: sr.head.Category, Type: sr.head.Type, Enabled: sr.head.Enabled}) {
			continue
		}
		if err := fn(i, &sr); err != nil {
			return err
		}
	}
	return nil
}

// Each calls fn with every row f matches, in canonical order, each with its
// row_num, and stops at fn's first error, which it returns.
func (s *Snapshot) Each(f Filter, fn func(*contract.Row) error) error {
	return s.matching(f, func(i int, sr *snapRow) error {
		r, err := sr.decode()
		if err != nil {
			return err
		}
		r.RowNum = i + 1
		return fn(&r)
	})
}

// List is Projector.List over the snapshot: it decodes only the rows of the page.
func (s *Snapshot) List(f Filter, offset, limit int) ([]contract.Row, int, error) {
	out := []contract.Row{}
	total := 0
	err := s.matching(f, func(i int, sr *snapRow) error {
		total++
		if total <= offset || len(out) >= limit {
			return nil
		}
		r, err := sr.decode()
		if err != nil {
			return err
		}
		r.RowNum = i + 1
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}
