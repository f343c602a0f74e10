package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
)

// Sentinel errors of the directory routes and the import. dirStatus maps them, and
// the contract and eventlog sentinels the routes meet, to HTTP statuses in one place.
var (
	// errDirExists: a POST (or a non-upsert import row) names a key that is present.
	errDirExists = errors.New("exists")
	// errDirNotFound: GET, PATCH or DELETE of a key that is not in the directory.
	errDirNotFound = errors.New("not_found")
	// errDirBadQuery: a query parameter of a directory route is not usable.
	errDirBadQuery = errors.New("bad query parameter")
	// errDirNotVisible: the event was appended but the projector did not apply it
	// within the write timeout. The write happened; a later read will show it.
	errDirNotVisible = errors.New("written to the log but not yet projected")
	// errDirUnavailable: the projection or the log could not be read or written.
	errDirUnavailable = errors.New("directory unavailable")
)

// dirStatus is the HTTP status of a directory error:
//
//	400  malformed JSON, wrong types, unknown fields, unknown type, bad key
//	     characters, invalid values, key mismatch, no recognized fields, hygiene
//	     refusals, bad query parameters
//	404  not_found
//	409  exists; conflict (another writer changed the key first)
//	408  the body stopped arriving before the read timeout
//	413  payload_too_large: the body, a row, or a row as the log stores it
//	429  too_many_imports
//	504  appended but not projected within the write timeout
//	503  anything else (the log or the projection failed)
func dirStatus(err error) int {
	switch {
	case errors.Is(err, errDirNotFound):
		return http.StatusNotFound
	case errors.Is(err, errDirExists), errors.Is(err, eventlog.ErrConflict):
		return http.StatusConflict
	case errors.Is(err, errPayloadTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, errBodyTimeout):
		return http.StatusRequestTimeout
	case errors.Is(err, errTooManyImports):
		return http.StatusTooManyRequests
	case errors.Is(err, errDirNotVisible):
		return http.StatusGatewayTimeout
	case errors.Is(err, contract.ErrHygieneRefused),
		errors.Is(err, contract.ErrNoRecognizedFields),
		errors.Is(err, contract.ErrMalformedJSON),
		errors.Is(err, contract.ErrUnknownField),
		errors.Is(err, contract.ErrWrongType),
		errors.Is(err, contract.ErrRequired),
		errors.Is(err, contract.ErrInvalid),
		errors.Is(err, contract.ErrKeyMismatch),
		errors.Is(err, errDirBadQuery),
		errors.Is(err, errMalformedDispatch):
		return http.StatusBadRequest
	}
	return http.StatusServiceUnavailable
}

// dirMessage is the text users see for a directory error: a hygiene refusal's
// literal, the article's "no recognized fields", "not_found", or a message that says
// what to fix. Several field problems are joined with "; ".
func dirMessage(key string, err error) string {
	var refusal *contract.RefusalError
	switch {
	case errors.As(err, &refusal):
		return refusal.Error()
	case errors.Is(err, contract.ErrNoRecognizedFields):
		return contract.ErrNoRecognizedFields.Error()
	case errors.Is(err, errDirNotFound):
		return "not_found"
	case errors.Is(err, errDirExists):
		return fmt.Sprintf("exists: %s is already in the directory; PUT /api/directory/%s replaces it and PATCH changes some of its fields", key, key)
	case errors.Is(err, eventlog.ErrConflict):
		return fmt.Sprintf("conflict: %s was changed by another writer between this request's read and its write; nothing was written; re-read the row and retry", key)
	}
	return joinedText(err)
}

// joinedText renders an errors.Join tree on one line, its leaves separated by "; ".
func joinedText(err error) string {
	var parts []string
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, c := range j.Unwrap() {
				walk(c)
			}
			return
		}
		parts = append(parts, e.Error())
	}
	walk(err)
	return strings.Join(parts, "; ")
}

// writeDirError writes err as the directory routes answer it: a hygiene refusal's
// Body verbatim; {"error":"not_found","key":…} and {"error":"exists: …","key":…};
// otherwise {"error":"<message>"}.
func writeDirError(w http.ResponseWriter, key string, err error) {
	status := dirStatus(err)
	var refusal *contract.RefusalError
	switch {
	case errors.As(err, &refusal):
		writeJSON(w, status, refusal.Body())
	case errors.Is(err, errDirNotFound), errors.Is(err, errDirExists):
		writeJSON(w, status, map[string]string{"error": dirMessage(key, err), "key": key})
	default:
		writeError(w, status, dirMessage(key, err))
	}
}
