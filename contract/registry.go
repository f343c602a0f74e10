package contract

import (
	"cmp"
	"slices"
)

// RegistryEntry is one row as the registry (GET /api/dispatch?registry=1) lists it:
// enough to choose a row and fetch its document, nothing more: no content body,
// no target, and of the credential only whether there is one.
type RegistryEntry struct {
	Key      string `json:"key"`
	Type     string `json:"type"`
	Category string `json:"category"`
	// Description is the row's one-line description, Args its # ARGS: line; each
	// at most DocLineCap bytes.
	Description string `json:"description"`
	Args        string `json:"args"`
	// Risk is RiskHigh for a sensitive row, else RiskLow.
	Risk string `json:"risk"`
	// Credentialed is set when the row names a credential (its auth column).
	Credentialed bool `json:"credentialed"`
	// PlannerVisible is set when planners and the MCP projection list the row.
	PlannerVisible bool `json:"planner_visible"`

	rank int    // planner_rank
	seq  *int64 // for the canonical order among equal ranks
}

// NewRegistryEntry is r's registry entry.
func NewRegistryEntry(r *Row) RegistryEntry {
	return RegistryEntry{
		Key:            r.Key,
		Type:           r.Type,
		Category:       r.Category,
		Description:    clip(Description(r), DocLineCap),
		Args:           clip(ParseDoc(r.Content).Args, DocLineCap),
		Risk:           r.Risk(),
		Credentialed:   r.Auth != "",
		PlannerVisible: r.PlannerVisible == 1,
		rank:           r.PlannerRank,
		seq:            r.Seq,
	}
}

// SortRegistry sorts entries into planner order: ascending planner_rank (lower
// wins), then the canonical order (see Compare).
func SortRegistry(entries []RegistryEntry) {
	slices.SortFunc(entries, func(a, b RegistryEntry) int {
		if c := cmp.Compare(a.rank, b.rank); c != 0 {
			return c
		}
		return Compare(&Row{Key: a.Key, Seq: a.seq}, &Row{Key: b.Key, Seq: b.seq})
	})
}
