// Package contract owns the directory row: its type, validation and hygiene gates,
// the PATCH allow-list, docstring parsing, the contract fingerprint and the canonical
// ordering. Everything here is pure: no I/O, no clock (time is passed in), no
// environment. It is safe for concurrent use; nothing in it holds state.
//
// # Writes
//
// A request body becomes Fields with DecodeFields, then a Row with one of:
//
//   - Create (POST): key and type required; absent fields take the column defaults
//     (enabled 1, planner_visible 1, planner_rank 100, sensitive 0); the
//     high_risk_missing_schema gate applies, missing_description does not.
//   - Replace (PUT): the body is the whole row; the path key wins and a different body
//     key is refused; created_at survives; every hygiene code applies.
//   - Patch (PATCH): merges only the thirteen PatchAllowList fields, reports the rest
//     as ignored, returns ErrNoRecognizedFields when none remain, and refuses only a
//     hygiene violation the old row did not already have.
//
// Each returns the row to store with updated_at (and, for a new row, created_at) set
// to now in TimeLayout, e.g. 2026-07-26T04:36:19.832Z.
//
// # Errors
//
// Field problems are *ValidationError values ("<field>: <problem>"), joined with
// errors.Join when there are several; each wraps one of ErrUnknownField, ErrWrongType,
// ErrRequired, ErrInvalid or ErrKeyMismatch. Malformed bodies wrap ErrMalformedJSON.
// Hygiene refusals are *RefusalError values whose Error is the documented literal
// "registry_hygiene_refused: <code>" and whose Body is the exact response body,
// {"error":…,"how_to_fix":…,"state_changed":false}. ErrNoRecognizedFields's message is
// the literal "no recognized fields".
//
// # Documents and the registry
//
// NewDocument turns a row and a DocContext (the public base URL, the Viewer, the
// auth column's form and variable names, the open breaker's literal) into the
// row's contract Document, which Markdown and JSON render with the same blocks:
// path, capability and when to use, RUN NOW, example call, type · runner · auth ·
// risk, inputs and outputs, affordances (computed for the Viewer), the machine
// contract, invocation/ledger/repair URLs and four troubleshooting entries chosen
// by the row's runner. It never sees a credential value. Each quoted docstring
// line is cut to DocLineCap bytes, the example to DocExampleCap, an inlined
// input_schema to DocSchemaCap, so a document stays close to its scaffolding's
// size (3.5–3.8 KB for the four rows under testdata/golden/document).
//
// Viewer is the reader's credential in the abstract (owner, capability token with
// scope and risk ceiling, none): Discovers says whether it may find a row (enabled
// and in scope), MayInvoke whether the server would let it call one.
// NewRegistryEntry and SortRegistry build the registry: one compact entry per row,
// in planner order (planner_rank, then the canonical order).
//
// # Arguments
//
// CompileSignature maps a row's pipe arguments onto its input_schema (the ARGS
// line's $N=name pairs, else the schema's property order) and compiles the schema
// with CompileSchema, the function the write path validates it with. The gate
// checks every call with the Signature: CheckPipe for a pipe body, PipeOf for an
// object of named arguments (which it also turns into the pipe body the runner
// gets). Their errors are *InputError values wrapping ErrInput, one sentence each.
//
// # Caveats
//
//   - Text columns use "" for SQL NULL; a stored row cannot tell an empty string from
//     NULL, and JSON null decodes to "".
//   - The description that missing_description requires is the "# WHAT:" text, else the
//     first untagged comment line, else the first comment line that says anything
//     (so DIR_PATCH's "# ARGS: key | json_body" counts); on an agent row with no comment
//     line it is the first non-empty line of the prompt. A bare "# WHAT:" does not count.
//   - Validate checks the whole row, so a row stored before a rule existed (say, an
//     examples value that is not a JSON array) must be fixed by the same PATCH that
//     edits anything else on it. Only hygiene is grandfathered.
//   - input_schema must be self-contained: every $ref outside the schema (http, https,
//     file, or relative) is refused, and no metaschema beyond the bundled drafts can be
//     named. Schemas without $schema compile as draft 2020-12.
//   - Fingerprint covers the effective runner, so setting runner to the value type
//     already implies does not change it, and it ignores allowed_categories. Changing the
//     encoding or the field set changes every fingerprint and invalidates every token
//     pinned to one; bump its version string when doing so.
//   - The canonical order compares keys as bytes: upper case sorts before lower case.
//   - PatchAllowList and Types are exported slices for reading; do not modify them.
package contract
