package answer

import "time"

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
