package contract

import (
	"encoding/json"
	"slices"
	"time"
)

// Change is one mutation of a row, as the fold applied it.
type Change struct {
	// Seq is the mutation's control-stream sequence; At, Actor and Action are
	// its envelope's time and actor and its action (create, replace, patch,
	// delete).
	Seq    uint64    `json:"seq"`
	At     time.Time `json:"at"`
	Actor  string    `json:"actor"`
	Action string    `json:"action"`
	// Fields are the row's fields that changed, old to new, in name order; a
	// field the row did not have (before a create, after a delete) is null.
	Fields []FieldChange `json:"fields"`
	// Fingerprint is the row's contract fingerprint after the change, empty once
	// deleted; ContractChanged says whether it differs from the one before.
	Fingerprint     string `json:"fingerprint,omitempty"`
	ContractChanged bool   `json:"contract_changed"`
	// Row is the row after the change; nil after a delete.
	Row *Row `json:"row,omitempty"`
}

// FieldChange is one field of a row before and after a change.
type FieldChange struct {
	Field string `json:"field"`
	Old   any    `json:"old"`
	New   any    `json:"new"`
}

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
