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
	// OwnerColumnsFrom is set on a created row whose key had a row of the same
	// source before (an operation or a tool that was pruned and is back): the
	// control-stream sequence of that row's last version, whose owner's columns
	// (enabled, sensitive, …) the created row took back.
	OwnerColumnsFrom uint64 `json:"owner_columns_from,omitempty"`
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
	// CredentialOrigins are the origins the import's rows send a credential to
	// (those created, updated or unchanged; a dry run's, those it would write):
	// empty when no row carries one.
	CredentialOrigins []CredentialOrigin `json:"credential_origins,omitempty"`
}

// CredentialOrigin is an origin (scheme://host[:port]) that an import's rows send
// a credential to: the environment variables whose values go there, and how many
// rows send one.
type CredentialOrigin struct {
	Origin string   `json:"origin"`
	Env    []string `json:"env"`
	Rows   int      `json:"rows"`
}

// ImportFailure reports one row an import of rows did not write.
type ImportFailure struct {
	Index    int    `json:"index"`          // 0-based position among the body's rows
	Line     int    `json:"line,omitempty"` // 1-based line, for NDJSON
	Key      string `json:"key"`
	Error    string `json:"error"`
	HowToFix string `json:"how_to_fix,omitempty"` // for hygiene refusals
}

// ImportWarning is a row the import wrote that cannot run as written: Warning
// is the literal every call of it will fail with.
type ImportWarning struct {
	Index   int    `json:"index"`          // 0-based position among the body's rows
	Line    int    `json:"line,omitempty"` // 1-based line, for NDJSON
	Key     string `json:"key"`
	Warning string `json:"warning"`
}

// MaxListedFailures is how many failed rows an ImportResult lists; the rest are
// counted in FailedUnlisted.
const MaxListedFailures = 10_000

// ImportResult is the answer to an import of rows (POST /api/directory/import).
type ImportResult struct {
	OK int `json:"ok"`
	// Unchanged are the rows of OK an upsert found equal to the stored ones but
	// for their timestamps: nothing was appended for them.
	Unchanged int             `json:"unchanged,omitempty"`
	Failed    []ImportFailure `json:"failed"`
	// FailedUnlisted are the failed rows past the first MaxListedFailures: counted,
	// not listed, so that a body of many bad rows does not make an answer (and a
	// list in memory) hundreds of times its size.
	FailedUnlisted int `json:"failed_unlisted,omitempty"`
	// Warnings are the written rows that cannot run as written, each with the
	// literal every call of it will fail with.
	Warnings []ImportWarning `json:"warnings,omitempty"`
	// Error is set when the rows were written but are not yet visible (HTTP 504),
	// or when the body stopped before its end (HTTP 408 or 413; NDJSON: the rows
	// before that point were imported).
	Error string `json:"error,omitempty"`
	// IgnoredColumns are a table's columns that are not the directory's
	// (format=d1 or sqlite): their values are not imported.
	IgnoredColumns []string `json:"ignored_columns,omitempty"`
}
