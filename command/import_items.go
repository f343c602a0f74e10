package command

import (
	"context"
	"errors"
	"fmt"
	"time"

	imports "github.com/capdir/capdir/api/importer"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/projector"
)

// ItemsImport is what an import of items does besides writing them.
type ItemsImport struct {
	// Source names the import in its rows' SOURCE line (imports.SourceLine).
	Source string
	// Prune deletes the rows of Source whose keys the import no longer has.
	Prune bool
	// DryRun decides every item as it would be written, and writes nothing.
	DryRun bool
}

// errUnchanged: an imported row equal to the one stored; nothing is appended.
var errUnchanged = errors.New("unchanged")

// ImportItems writes the rows of items, each like a PUT of the columns the
// importer owns (key, type, runner, target, auth, content, category,
// input_schema, examples): a new key is created with the column defaults, a present one keeps
// its other columns (enabled, sensitive, seq, …) as the owner set them. A key
// that had a row of in.Source before, since deleted (pruned: the operation or
// tool left its source, and is back), is created with the other columns of
// that row's last version, so a row never comes back less guarded than it was
// (enabled 0 and sensitive 1 stay); its outcome says so (OwnerColumnsFrom). A row
// equal to the stored one appends nothing. A key held by a row that is not of
// in.Source (no SOURCE line naming it) is not overwritten: that item fails with
// exists. Each row passes the directory's checks (contract, the operator's
// secret allow-list, the row limit) or fails alone.
//
// It returns once every written row is visible; an error (ErrNotVisible,
// ErrUnavailable) comes with the result so far.
func (d *Directory) ImportItems(ctx context.Context, items []imports.Item, in ItemsImport) (imports.Report, error) {
	res := imports.Report{DryRun: in.DryRun, Items: make([]imports.Outcome, 0, len(items)), Vanished: []string{}, Pruned: []string{}}
	present := map[string]bool{}
	var maxSeq uint64
	for _, it := range items {
		out := imports.Outcome{Source: it.Source, Key: it.Key, Notes: it.Notes}
		if it.Key != "" {
			present[it.Key] = true
		}
		if it.Row == nil {
			out.Action, out.Error = imports.Refused, it.Refused
			res.Add(out)
			continue
		}
		key := it.Key
		earlier := func() (*contract.Row, error) {
			row, seq, err := d.lastOfSource(ctx, key, in.Source)
			out.OwnerColumnsFrom = seq
			return row, err
		}
		p, err := d.prepare(it.Key, buildImported(*it.Row, in.Source, earlier))
		if p.mutation.Action != contract.ActionCreate || err != nil {
			out.OwnerColumnsFrom = 0
		} else if out.OwnerColumnsFrom > 0 {
			out.Notes = append(out.Notes, fmt.Sprintf("back after it was deleted: the row keeps the columns the import does not own (enabled, sensitive, …) as its version of control sequence %d had them", out.OwnerColumnsFrom))
		}
		switch {
		case errors.Is(err, errUnchanged):
			out.Action = imports.Unchanged
		case err != nil:
			out.Action, out.Error = imports.Failed, importItemError(it.Key, err)
		case in.DryRun:
			out.Action, out.Row, out.Warnings = actionOf(p), p.mutation.Row, p.warnings
		default:
			seq, err := d.append(ctx, p)
			if err != nil {
				out.Action, out.Error = imports.Failed, importItemError(it.Key, err)
				break
			}
			out.Action, out.Warnings, maxSeq = actionOf(p), p.warnings, max(maxSeq, seq)
		}
		res.Add(out)
	}
	if maxSeq > 0 {
		if err := d.visible(ctx, maxSeq, 1+len(items)/importRowsPerTimeout); err != nil {
			return res, err
		}
	}
	return res, d.prune(ctx, &res, present, in)
}

func actionOf(p dirPending) string {
	if p.existed {
		return imports.Updated
	}
	return imports.Created
}

func importItemError(key string, err error) string {
	if errors.Is(err, ErrExists) {
		return importOwnedMessage(key)
	}
	return Message(WithKey(key, err))
}

// prune lists the rows of in.Source that present does not name, and deletes them
// with in.Prune (unless a dry run).
func (d *Directory) prune(ctx context.Context, res *imports.Report, present map[string]bool, in ItemsImport) error {
	err := d.proj.Each(projector.Filter{}, func(r *contract.Row) error {
		if src, ok := imports.SourceOf(r.Content); ok && src == in.Source && !present[r.Key] {
			res.Vanished = append(res.Vanished, r.Key)
		}
		return nil
	})
	if err != nil {
		return Unavailable(err)
	}
	if !in.Prune {
		return nil
	}
	for _, key := range res.Vanished {
		if !in.DryRun {
			if _, err := d.Delete(ctx, key); err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
		}
		res.Pruned = append(res.Pruned, key)
	}
	return nil
}

// lastOfSource is, for a key that has no row, the last version of its row that
// was of source (its SOURCE line names source), and the control-stream sequence
// that wrote it; nil when the key never had a row of source. A row the owner
// wrote by hand under the key meanwhile, and deleted, is passed over: the
// source's row comes back as guarded as it last was. It reads the key's
// history from the log (projector.History), only for a key the projection has
// seen written; an error is ErrUnavailable, and the import of that key fails
// rather than create it with the column defaults.
func (d *Directory) lastOfSource(ctx context.Context, key, source string) (*contract.Row, uint64, error) {
	if _, seq, err := d.proj.Row(key); errors.Is(err, projector.ErrNotFound) && seq == 0 {
		return nil, 0, nil // never written: an append expecting none finds it so, or conflicts
	}
	h, err := d.proj.History(ctx, key)
	if err != nil {
		return nil, 0, Unavailable(err)
	}
	for i := len(h) - 1; i >= 0; i-- {
		if r := h[i].Row; r != nil {
			if src, ok := imports.SourceOf(r.Content); ok && src == source {
				return r, h[i].Seq, nil
			}
		}
	}
	return nil, 0, nil
}

// buildImported writes the importer's columns of imp over the stored row of its
// key, refusing a stored row of another source and answering errUnchanged when
// nothing would change. An absent key takes its other columns from earlier's
// row (the key's last row of source, see lastOfSource), else the column
// defaults.
func buildImported(imp contract.Row, source string, earlier func() (*contract.Row, error)) dirBuild {
	return func(old *contract.Row, now time.Time) (contract.DirectoryMutation, []string, error) {
		if old == nil {
			base := defaultRow()
			prev, err := earlier()
			if err != nil {
				return contract.DirectoryMutation{}, nil, err
			}
			if prev != nil {
				base = *prev
			}
			row, err := contract.Create(contract.FieldsFromRow(withImported(base, imp)), now)
			if err != nil {
				return contract.DirectoryMutation{}, nil, err
			}
			return contract.DirectoryMutation{Action: contract.ActionCreate, Key: row.Key, Row: &row}, nil, nil
		}
		if src, ok := imports.SourceOf(old.Content); !ok || src != source {
			return contract.DirectoryMutation{}, nil, ErrExists
		}
		row, err := contract.Replace(imp.Key, old, contract.FieldsFromRow(withImported(*old, imp)), now)
		if err != nil {
			return contract.DirectoryMutation{}, nil, err
		}
		if sameRow(row, *old) {
			return contract.DirectoryMutation{}, nil, errUnchanged
		}
		return contract.DirectoryMutation{Action: contract.ActionReplace, Key: row.Key, Row: &row}, nil, nil
	}
}

// defaultRow is a row with the column defaults.
func defaultRow() contract.Row {
	return contract.Row{Enabled: contract.DefaultEnabled, PlannerVisible: contract.DefaultPlannerVisible,
		PlannerRank: contract.DefaultPlannerRank, Sensitive: contract.DefaultSensitive}
}

// withImported is base with the importer's columns taken from imp.
func withImported(base, imp contract.Row) contract.Row {
	base.Key, base.Type, base.Runner, base.Target, base.Auth, base.Content = imp.Key, imp.Type, imp.Runner, imp.Target, imp.Auth, imp.Content
	base.Category, base.InputSchema, base.Examples = imp.Category, imp.InputSchema, imp.Examples
	base.RowNum = 0
	return base
}

// sameRow: a and b are equal but for their timestamps and row_num.
func sameRow(a, b contract.Row) bool {
	a.UpdatedAt, b.UpdatedAt, a.CreatedAt, b.CreatedAt, a.RowNum, b.RowNum = "", "", "", "", 0, 0
	if (a.Seq == nil) != (b.Seq == nil) || (a.Seq != nil && *a.Seq != *b.Seq) {
		return false
	}
	a.Seq, b.Seq = nil, nil
	return a == b
}
