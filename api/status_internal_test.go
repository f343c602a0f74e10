package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capdir/capdir/command"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// The one error table: each kind of error every route meets, its status and body.
func TestErrorTable(t *testing.T) {
	refusal := contract.Hygiene(&contract.Row{Key: "X", Type: "fn"})
	unknown := wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: "inv_1", Trace: "t_1", Key: "GRET"},
		Result: `{"attempted":"GRET","did_you_mean":["GREET"],"error":"unknown_key","ran":false}`}
	tests := []struct {
		name   string
		err    error
		status int
		body   string
		allow  string
	}{
		{"unauthorized", ErrUnauthorized, 401, string(unauthorizedBody), ""},
		{"no route", &routeError{kind: ErrNoRoute, path: "/nope"}, 404, `{"error":"not_found","path":"/nope"}`, ""},
		{"wrong method", &routeError{kind: ErrMethodNotAllowed, path: "/api/directory", allow: "GET, HEAD, POST"}, 405,
			`{"allow":"GET, HEAD, POST","error":"method_not_allowed"}`, "GET, HEAD, POST"},
		{"http.MaxBytesError", fmt.Errorf("reading: %w", &http.MaxBytesError{Limit: 10}), 413, `{"error":"payload_too_large: the request body is more than 10 bytes; the limit is 10"}`, ""},
		{"payload too large", command.TooLarge("the row", 12, 10), 413, `{"error":"payload_too_large: the row is 12 bytes; the limit is 10"}`, ""},
		{"row too large, keyed", command.WithKey("K", command.TooLarge("the row", 12, 10)), 413, `{"error":"payload_too_large: the row is 12 bytes; the limit is 10"}`, ""},
		{"payload ceiling", fmt.Errorf("%w: the body is 3 bytes", dispatcher.ErrPayloadTooLarge), 413, "", ""},
		{"body timeout", fmt.Errorf("%w: the row stopped arriving", ErrBodyTimeout), 408, `{"error":"request_timeout: the row stopped arriving"}`, ""},
		{"too many imports", fmt.Errorf("%w: retry", ErrTooManyImports), 429, `{"error":"too_many_imports: retry"}`, ""},
		{"import cut short", &command.ImportIncompleteError{Result: command.ImportResult{OK: 1, Failed: []command.ImportFailure{}}, Err: command.TooLarge("the import body", -1, 10)}, 413,
			`{"ok":1,"failed":[],"error":"payload_too_large: the import body is more than 10 bytes; the limit is 10"}`, ""},
		{"malformed dispatch", badRequest(dispatchBodyError(io.ErrUnexpectedEOF)), 400, `{"error":"the body ends before its JSON object is closed; ` + strings.ReplaceAll(dispatchShapeHint, `"`, `\"`) + `"}`, ""},
		{"hygiene", command.WithKey("X", refusal), 400, strings.TrimSpace(string(refusal.Body())), ""},
		{"validation", command.WithKey("X", &contract.ValidationError{Field: "type", Problem: "must be fn"}), 400, `{"error":"type: must be fn"}`, ""},
		{"joined", errors.Join(&contract.ValidationError{Field: "a", Problem: "x"}, &contract.ValidationError{Field: "b", Problem: "y"}), 400, `{"error":"a: x; b: y"}`, ""},
		{"no recognized fields", contract.ErrNoRecognizedFields, 400, `{"error":"no recognized fields"}`, ""},
		{"bad query", fmt.Errorf("%w: limit must be an integer", ErrBadQuery), 400, `{"error":"bad query parameter: limit must be an integer"}`, ""},
		{"bad request", badRequest(`"key" is required`), 400, `{"error":"\"key\" is required"}`, ""},
		{"unknown key", &UnknownKeyError{Receipt: unknown}, 404,
			`{"attempted":"GRET","did_you_mean":["GREET"],"error":"unknown_key","invocation_id":"inv_1","ran":false,"trace":"t_1"}`, ""},
		{"row not found", command.WithKey("K", ErrNotFound), 404, `{"error":"not_found","key":"K"}`, ""},
		{"receipt not found", &receiptNotFound{id: "inv_x"}, 404, `{"error":"not_found","invocation_id":"inv_x"}`, ""},
		{"confirm not found", &receiptNotFound{id: "inv_x", confirm: true}, 404, `{"confirmed":false,"error":"no such invocation","invocation_id":"inv_x"}`, ""},
		{"exists", command.WithKey("K", ErrExists), 409, `{"error":"exists: K is already in the directory; PUT /api/directory/K replaces it and PATCH changes some of its fields","key":"K"}`, ""},
		{"conflict", command.WithKey("K", fmt.Errorf("%w (wrong last sequence)", eventlog.ErrConflict)), 409, `{"error":"conflict: K was changed by another writer between this request's read and its write; nothing was written; re-read the row and retry"}`, ""},
		{"not visible", fmt.Errorf("%w: sequence 9", ErrNotVisible), 504, `{"error":"written to the log but not yet projected: sequence 9"}`, ""},
		{"import not visible", &command.ImportIncompleteError{Result: command.ImportResult{OK: 2, Failed: []command.ImportFailure{}}, Err: fmt.Errorf("%w: sequence 9", ErrNotVisible)}, 504,
			`{"ok":2,"failed":[],"error":"written to the log but not yet projected: sequence 9"}`, ""},
		{"dispatch failed", newError(ErrDispatchFailed, "dispatch failed: %w", errors.New("boom")), 502, `{"error":"dispatch failed: boom"}`, ""},
		{"disk full", command.WithKey("K", fmt.Errorf("%w: no room", eventlog.ErrDiskFull)), 507, `{"error":"eventlog: the log's disk is full: no room"}`, ""},
		{"dispatch on a full disk", newError(ErrDispatchFailed, "dispatch failed: %w", fmt.Errorf("%w: no room", eventlog.ErrDiskFull)), 507,
			`{"error":"dispatch failed: eventlog: the log's disk is full: no room"}`, ""},
		{"electing", command.WithKey("K", fmt.Errorf("%w: no answer", eventlog.ErrElecting)), 503, `{"error":"eventlog: the log is electing a leader: no answer"}`, ""},
		{"dispatch while electing", newError(ErrDispatchFailed, "dispatch failed: %w", fmt.Errorf("%w: no answer", eventlog.ErrElecting)), 503,
			`{"error":"dispatch failed: eventlog: the log is electing a leader: no answer"}`, ""},
		{"dispatch not appended", newError(ErrDispatchFailed, "dispatch failed: %w", dispatcher.ErrNotAppended), 503,
			`{"error":"dispatch failed: ` + dispatcher.ErrNotAppended.Error() + `"}`, ""},
		{"no dispatcher", ErrNoDispatcher, 503, `{"error":"dispatch is not running on this node"}`, ""},
		{"unavailable", command.Unavailable(errors.New("bolt closed")), 503, `{"error":"directory unavailable: bolt closed"}`, ""},
		{"health", &healthError{errors.New("no answer")}, 503, `{"error":"no answer","ok":false}`, ""},
		{"anything else", errors.New("disk on fire"), 503, `{"error":"disk on fire"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			writeErr(rec, tt.err)
			if rec.Code != tt.status {
				t.Errorf("status %d, want %d", rec.Code, tt.status)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("content type %q", ct)
			}
			if !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("body is not JSON: %s", rec.Body)
			}
			if got := strings.TrimSpace(rec.Body.String()); tt.body != "" && got != tt.body {
				t.Errorf("body %s\nwant %s", got, tt.body)
			}
			if got := rec.Header().Get("Allow"); got != tt.allow {
				t.Errorf("Allow %q, want %q", got, tt.allow)
			}
		})
	}
}

// A too_many_imports answer says when to retry, and so does an append refused while
// the log elects a leader (a write or a dispatch) and a dispatch whose request the
// log did not take; no other error answer does.
func TestRetryAfterOnlyOnTooManyImportsAndElections(t *testing.T) {
	electing := fmt.Errorf("%w: no answer", eventlog.ErrElecting)
	for _, err := range []error{fmt.Errorf("%w: busy", ErrTooManyImports), ErrUnauthorized, command.TooLarge("the row", 2, 1),
		command.WithKey("K", electing), newError(ErrDispatchFailed, "dispatch failed: %w", electing), fmt.Errorf("%w: no room", eventlog.ErrDiskFull),
		newError(ErrDispatchFailed, "dispatch failed: %w", dispatcher.ErrNotAppended)} {
		rec := httptest.NewRecorder()
		writeErr(rec, err)
		got, want := rec.Header().Get("Retry-After"), ""
		switch {
		case errors.Is(err, ErrTooManyImports):
			want = importRetryAfter
		case errors.Is(err, eventlog.ErrElecting), errors.Is(err, dispatcher.ErrNotAppended):
			want = electionRetryAfter
		}
		if got != want {
			t.Errorf("%v: Retry-After %q, want %q", err, got, want)
		}
	}
}

// No handler writes the status of an error itself: outside the error table, every
// writeJSON and WriteHeader in the package writes a 2xx.
func TestNoHandlerWritesAnErrorStatus(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "status.go" {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var status ast.Expr
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				if fn.Name == "writeJSON" && len(call.Args) == 3 {
					status = call.Args[1]
				}
			case *ast.SelectorExpr:
				if fn.Sel.Name == "WriteHeader" && len(call.Args) == 1 {
					status = call.Args[0]
				}
			}
			if status == nil {
				return true
			}
			if sel, ok := status.(*ast.SelectorExpr); ok && success[sel.Sel.Name] {
				return true
			}
			text := string(src[fset.Position(status.Pos()).Offset:fset.Position(status.End()).Offset])
			if name == "server.go" && (text == "status" || text == "rec.status") {
				return true // writeJSON's own WriteHeader, and passing the mux's redirect on
			}
			t.Errorf("%s: writes status %s itself; return an error for writeErr instead", fset.Position(call.Pos()), text)
			return true
		})
	}
}

// success are the statuses a handler may write itself.
var success = map[string]bool{"StatusOK": true, "StatusCreated": true, "StatusAccepted": true, "StatusNoContent": true}
