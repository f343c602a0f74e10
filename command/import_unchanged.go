package command

import (
	"time"

	"github.com/capdir/capdir/contract"
)

// unlessUnchanged is build answering errUnchanged where the row it makes equals
// the stored one but for its timestamps: an upsert import of rows that did not
// change (a table imported again, D1/SQLite or rows) appends nothing for them,
// as an OpenAPI or MCP import does (sameRow).
func unlessUnchanged(build dirBuild) dirBuild {
	return func(old *contract.Row, now time.Time) (contract.DirectoryMutation, []string, error) {
		m, warnings, err := build(old, now)
		if err == nil && old != nil && m.Row != nil && sameRow(*m.Row, *old) {
			return contract.DirectoryMutation{}, nil, errUnchanged
		}
		return m, warnings, err
	}
}
