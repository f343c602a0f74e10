package importer

import "github.com/capdir/capdir/api/answer"

// Actions of an imported item, as Outcome.Action reports them.
const (
	Created   = answer.ImportCreated
	Updated   = answer.ImportUpdated
	Unchanged = answer.ImportUnchanged // the row is as the import would write it: nothing appended
	Refused   = answer.ImportRefused   // the importer could not make a row of it
	Failed    = answer.ImportFailed    // the directory refused its row
)

// An import's report is declared in api/answer, which the Go client reads
// without the JSON Schema compiler; these are the same types.
type (
	// Outcome is what an import did with one item.
	Outcome = answer.ImportOutcome
	// Report is an import of items: one outcome per item, the count of each
	// action, and the rows the items no longer have.
	Report = answer.Report
	// SpecReport is the answer to an import of an API description.
	SpecReport = answer.SpecReport
	// CredentialOrigin is an origin an import's rows send a credential to.
	CredentialOrigin = answer.CredentialOrigin
)
