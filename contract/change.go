package contract

import (
	"encoding/json"
	"slices"

	"github.com/capdir/capdir/api/answer"
)

// Change (one mutation of a row, as the fold applied it) and FieldChange are
// declared in api/answer; they are the same types here.
type (
	Change      = answer.Change
	FieldChange = answer.FieldChange
)

// Diff lists the fields whose JSON values differ between rows a and b (either
// may be nil: a row that does not exist), in name order.
func Diff(a, b *Row) []FieldChange {
	am, bm := rowFields(a), rowFields(b)
	names := make([]string, 0, len(am)+len(bm))
	for k := range am {
		names = append(names, k)
	}
	for k := range bm {
		if _, ok := am[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	out := []FieldChange{}
	for _, k := range names {
		o, n := am[k], bm[k]
		if string(o) == string(n) {
			continue
		}
		out = append(out, FieldChange{Field: k, Old: rawOrNil(o), New: rawOrNil(n)})
	}
	return out
}

func rowFields(r *Row) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	if r == nil {
		return m
	}
	b, _ := json.Marshal(r) // a row always marshals
	_ = json.Unmarshal(b, &m)
	return m
}

func rawOrNil(v json.RawMessage) any {
	if v == nil {
		return nil
	}
	return v
}
