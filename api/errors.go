package api

import "errors"

// Sentinel errors about a request's body and the import's admission, shared by the
// directory routes, the import and dispatch. dirStatus maps them to HTTP statuses
// for every route; body.go and import.go word them.
var (
	// errPayloadTooLarge: a request body, an import row, or a row as the log would
	// store it, is over its limit. Nothing is appended. 413.
	errPayloadTooLarge = errors.New("payload_too_large")
	// errBodyTimeout: the request body stopped arriving before the server's read
	// timeout. 408.
	errBodyTimeout = errors.New("request_timeout")
	// errTooManyImports: the node runs as many imports as it allows. 429.
	errTooManyImports = errors.New("too_many_imports")
	// errMalformedDispatch: a dispatch body is not one JSON object of the dispatch
	// fields. 400.
	errMalformedDispatch = errors.New("malformed dispatch body")
)
