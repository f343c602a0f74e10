// Package testdata holds fixtures shared by the tests of every capdir package.
//
// sample_rows.json is a JSON array of the six directory rows the samples print, as
// stored (SQL NULL as JSON null): NOW (fn), GROK_MODELS (http), PROMPT_LAB_AGENT
// (agent), BLOOIO_FINISH (flow), DIR_PATCH (http, $2+ body) and ZZ_TEST_TEMPERATURE
// (the row created by the sample POST, with its target's "¤t=" restored to
// "&current="). Columns the reference does not print take their defaults. The
// sample prints only two timestamps, GROK_MODELS's updated_at and the
// ZZ_TEST_TEMPERATURE POST receipt; the other rows' updated_at is a placeholder,
// "2026-07-26 00:00:00", the snapshot date, and their created_at is null as on
// old rows.
//
// document_rows.json holds two stand-in rows, ROUTER (agent, with includes) and
// CONTENT_SEARCH (flow), which with NOW and GROK_MODELS give one row of each type
// for the contract documents in golden/document (KEY.md and KEY.json, as GET
// /api/dispatch?key=KEY&format=… serves them with the public URL
// https://capdir.example; `go test ./contract -run Golden -update` rewrites them).
//
// ProductionRows generates the 891-row directory the article's production table
// holds, with its counts (ProductionCounts), for the D1 and SQLite importers' tests;
// openapi/ holds the OpenAPI specs the OpenAPI importer's tests read (see its
// README.md for their sources and licenses).
package testdata

import _ "embed"

//go:embed sample_rows.json
var sampleRows []byte

// SampleRows returns the contents of sample_rows.json. The slice is a fresh copy
// that the caller may modify.
func SampleRows() []byte {
	return append([]byte(nil), sampleRows...)
}
