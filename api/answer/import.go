package answer

// Actions of an imported item, as ImportOutcome.Action reports them.
const (
	ImportCreated   = "created"
	ImportUpdated   = "updated"
	ImportUnchanged = "unchanged" // the row is as the import would write it: nothing appended
	ImportRefused   = "refused"   // the importer could not make a row of it
	ImportFailed    = "failed"    // the directory refused its row
)

// ImportOutcome is what an import of rows from a source (an OpenAPI spec, an
// MCP server's tools) did with one item.
type ImportOutcome struct {
	Source string   `json:"source"`
	Key    string   `json:"key,omitempty"`
	Action string   `json:"action"`
	Error  string   `json:"error,omitempty"`
	Notes  []string `json:"notes,omitempty"`
	// Warnings are the literals every call of the written row will fail with as
	// written (a function that is not registered, …).
	Warnings []string `json:"warnings,omitempty"`
	Row      *Row     `json:"row,omitempty"` // a dry run's: the row as it would be written
}

// Report is an import of items from a source: one outcome per item in the items'
// order, the count of each action, and the rows of the import's source that the
// items no longer have (Vanished; deleted, and listed in Pruned too, when pruning).
type Report struct {
	DryRun    bool            `json:"dry_run"`
	Created   int             `json:"created"`
	Updated   int             `json:"updated"`
	Unchanged int             `json:"unchanged"`
	Refused   int             `json:"refused"`
	Failed    int             `json:"failed"`
	Items     []ImportOutcome `json:"items"`
	Vanished  []string        `json:"vanished"`
	Pruned    []string        `json:"pruned"`
	// Error is set when rows were written but the import ended in an error (they
	// are not yet visible, a prune failed): the rest of the report says what was
	// written.
	Error string `json:"error,omitempty"`
}

// Add records one outcome and counts its action.
func (r *Report) Add(o ImportOutcome) {
	switch o.Action {
	case ImportCreated:
		r.Created++
	case ImportUpdated:
		r.Updated++
	case ImportUnchanged:
		r.Unchanged++
	case ImportRefused:
		r.Refused++
	case ImportFailed:
		r.Failed++
	}
	r.Items = append(r.Items, o)
}

// SpecReport is the answer to an import of an API description (an OpenAPI spec):
// its title and version, how many operations it has, and the Report.
type SpecReport struct {
	Spec       string `json:"spec"`
	Version    string `json:"version,omitempty"`
	Operations int    `json:"operations"`
	Report
}
