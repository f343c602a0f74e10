// Package openapi turns an OpenAPI 3.0 or 3.1 document (JSON or YAML) into
// directory rows: each operation becomes one http row (key from its operationId,
// target METHOD server/path with the path parameters as slots and the query
// parameters after them, the JSON request body as the last argument, an
// input_schema of the arguments, a docstring, a credential from its security
// scheme with the operator's environment variable), or an importer.Item that
// says why it cannot be one. It reads nothing but the document and writes
// nothing: command.Directory.ImportItems writes the rows.
//
// # Caveats
//
//   - Only local $refs are resolved; a spec that refers to another file or URL is
//     refused whole.
//   - The parser reads a spec through a YAML node tree, which allocates a few
//     hundred times its size: MaxSpecBytes bounds one conversion's memory, and
//     MaxOperations is checked before the spec is parsed (of a JSON spec exactly,
//     of a YAML one by its block-style method lines) and again after.
//   - An optional query parameter a call leaves out is sent empty (name=): a
//     target cannot drop a parameter.
//   - Header and cookie parameters are not sent (a required one refuses the
//     operation), nor are bodies without a JSON media type.
package openapi
