package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/capdir/capdir/api/importer/openapi"
	"github.com/capdir/capdir/api/ownerkey"
	"github.com/capdir/capdir/command"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// errorRule is one row of the error table: the errors it matches, their status,
// and their JSON body (nil: {"error": errMessage(err)}).
type errorRule struct {
	match  func(error) bool
	status int
	body   func(error) any
}

func is(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

func as[T error]() func(error) bool {
	return func(err error) bool {
		var t T
		return errors.As(err, &t)
	}
}

// errorTable is the one place an error becomes an HTTP answer, for every route.
// The first rule that matches wins; an error no rule matches is 503 (the log or the
// projection failed). A new route adds its sentinels here, never a status of its own.
//
//	400  REFUSED_INPUT (the dispatch's answer, with its proof); hygiene refusals
//	     (RefusalError.Body verbatim); malformed JSON, wrong types, unknown fields,
//	     unknown type, bad key characters, invalid values, key mismatch, no
//	     recognized fields; bad query parameters and request bodies; bad_decision;
//	     bad_idempotency_key; an OpenAPI spec refused whole
//	401  unauthorized (an owner route to a token holder: the route needs the owner
//	     key; a dispatch without a credential that holds, or with an Authorization
//	     header that is not one bearer token); REFUSED_TOKEN
//	403  REFUSED_SCOPE: the token does not permit the call; host_not_allowed: a
//	     loopback listener asked under a Host not its own (with the host)
//	404  unknown route (with its path); unknown key, invocation id or approval; a
//	     dispatch's unknown_key (with did_you_mean and the refusal's receipt)
//	405  a known path with another method (with Allow)
//	408  request_timeout: the body stopped arriving before the read timeout
//	409  exists; conflict (another writer changed the key first);
//	     REFUSED_CONTRACT_CHANGED (the token's pinned contract is not the row's);
//	     approval_decided
//	410  approval_expired, approval_request_gone
//	413  payload_too_large, naming the limit: a body over its cap, a row over the
//	     row limit (as sent or as the log stores it), an import body over its cap,
//	     a spec over its size or operation limit;
//	     a dispatch payload over the ceiling; REFUSED_PAYLOAD_TOO_LARGE
//	422  idempotency_key_reused: the caller sent this Idempotency-Key before with
//	     another request (another key, body, arguments or shape); nothing ran
//	429  too_many_imports (with Retry-After); too_many_wrong_keys: the client's
//	     address sent too many wrong owner keys (with Retry-After)
//	502  the dispatcher could not take the request
//	503  the log or the projection failed; no dispatcher on this node;
//	     approval_unavailable; the log is electing a leader (with Retry-After):
//	     no server answered for its stream while the append was sent again
//	504  appended but not projected within the write timeout
//	507  the log's disk is full: nothing was stored
var errorTable = []errorRule{
	{is(ErrTokenRefused), http.StatusUnauthorized, tokenRefusedBody},
	{is(ErrScopeRefused), http.StatusForbidden, tokenRefusedBody},
	{is(ErrContractChanged), http.StatusConflict, tokenRefusedBody},
	{is(ErrTokenPayloadTooLarge), http.StatusRequestEntityTooLarge, tokenRefusedBody},
	{is(ErrInputRefused), http.StatusBadRequest, inputRefusedBody},
	{is(ErrUnauthorized), http.StatusUnauthorized, unauthorizedAnswer},
	{approvalIs(dispatcher.ErrBadDecision), http.StatusBadRequest, approvalBody},
	{approvalIs(dispatcher.ErrApprovalUnknown), http.StatusNotFound, approvalBody},
	{approvalIs(dispatcher.ErrApprovalDecided), http.StatusConflict, approvalBody},
	{approvalIs(dispatcher.ErrApprovalExpired), http.StatusGone, approvalBody},
	{approvalIs(dispatcher.ErrApprovalRequestGone), http.StatusGone, approvalBody},
	{approvalIs(nil), http.StatusServiceUnavailable, approvalBody},
	{as[*hostError](), http.StatusForbidden, hostBody},
	{is(ErrNoRoute), http.StatusNotFound, routeBody},
	{is(ErrMethodNotAllowed), http.StatusMethodNotAllowed, routeBody},
	{as[*command.ImportIncompleteError](), 0, importIncompleteBody},   // status: its cause's
	{as[*command.SpecImportIncompleteError](), 0, specIncompleteBody}, // status: its cause's
	{as[*http.MaxBytesError](), http.StatusRequestEntityTooLarge, nil},
	{is(ErrPayloadTooLarge), http.StatusRequestEntityTooLarge, nil},
	{is(openapi.ErrTooLarge), http.StatusRequestEntityTooLarge, nil},
	{is(dispatcher.ErrPayloadTooLarge), http.StatusRequestEntityTooLarge, nil},
	{is(ErrBodyTimeout), http.StatusRequestTimeout, nil},
	{is(ErrTooManyImports), http.StatusTooManyRequests, nil},
	{is(ownerkey.ErrThrottled), http.StatusTooManyRequests, throttledBody},
	{is(dispatcher.ErrIdempotencyKeyReused), http.StatusUnprocessableEntity, idempotencyBody},
	{as[*contract.RefusalError](), http.StatusBadRequest, refusalBody},
	{is(ErrUnknownKey), http.StatusNotFound, unknownKeyBody},
	{is(ErrNotFound), http.StatusNotFound, notFoundBody},
	{is(ErrExists), http.StatusConflict, existsBody},
	{is(ErrConflict), http.StatusConflict, nil},
	{isFixYourRequest, http.StatusBadRequest, nil},
	{is(ErrNotVisible), http.StatusGatewayTimeout, nil},
	{is(eventlog.ErrDiskFull), http.StatusInsufficientStorage, nil},
	{is(eventlog.ErrElecting), http.StatusServiceUnavailable, nil},
	{is(dispatcher.ErrNotAppended), http.StatusServiceUnavailable, nil},
	{is(ErrDispatchFailed), http.StatusBadGateway, nil},
	{as[*healthError](), http.StatusServiceUnavailable, healthBody},
}

// isFixYourRequest matches every "fix your request" error: one status, 400, for
// all of them (hygiene refusals included, above); the body's "error" tells them apart.
func isFixYourRequest(err error) bool {
	for _, s := range []error{
		ErrBadRequest, dispatcher.ErrBadIdempotencyKey, contract.ErrNoRecognizedFields, contract.ErrMalformedJSON, contract.ErrUnknownField,
		contract.ErrWrongType, contract.ErrRequired, contract.ErrInvalid, contract.ErrKeyMismatch,
		openapi.ErrSpec, openapi.ErrOptions, openapi.ErrCredentialOrigin,
	} {
		if errors.Is(err, s) {
			return true
		}
	}
	return errors.As(err, new(*contract.ValidationError))
}

// errAnswer is err's status and JSON body, from errorTable.
func errAnswer(err error) (int, any) {
	for _, r := range errorTable {
		if !r.match(err) {
			continue
		}
		status := r.status
		if status == 0 {
			status, _ = errAnswer(incompleteCause(err))
		}
		if r.body == nil {
			return status, messageBody(err)
		}
		return status, r.body(err)
	}
	return http.StatusServiceUnavailable, messageBody(err)
}

// ErrorAnswer is err's HTTP status and JSON body as every route answers it (the
// error table): the console shows a refused change with the same literal.
func ErrorAnswer(err error) (status int, body any) { return errAnswer(err) }

// writeErr answers err as errorTable says. Every route answers its errors here.
func writeErr(w http.ResponseWriter, err error) {
	status, body := errAnswer(err)
	errHeaders(w.Header(), err)
	writeJSON(w, status, body)
}

// errHeaders sets the headers of err's answer: Allow on a 405, Retry-After on a
// too_many_imports, while the log elects a leader, and for a request the log
// did not take (nothing was handed out: the same call may be sent again).
func errHeaders(h http.Header, err error) {
	var re *routeError
	if errors.As(err, &re) && re.allow != "" {
		h.Set("Allow", re.allow)
	}
	if errors.Is(err, ErrTooManyImports) {
		h.Set("Retry-After", importRetryAfter)
	}
	var te *ownerkey.ThrottledError
	if errors.As(err, &te) {
		h.Set("Retry-After", strconv.Itoa(te.RetryAfterSeconds()))
	}
	if errors.Is(err, eventlog.ErrElecting) || errors.Is(err, dispatcher.ErrNotAppended) {
		h.Set("Retry-After", electionRetryAfter)
	}
}

// electionRetryAfter is the Retry-After of an append refused while the log
// elects a leader: an election takes a few seconds more.
const electionRetryAfter = "5"

func messageBody(err error) any { return map[string]string{"error": errMessage(err)} }

// errMessage is the text users see for err: a dispatch payload over its ceiling,
// a request body over its cap, or a command's error as command.Message words it
// (a hygiene refusal's literal, "not_found", the exists and conflict messages, or
// the error's own text).
func errMessage(err error) string {
	var over *http.MaxBytesError
	switch {
	case errors.Is(err, dispatcher.ErrPayloadTooLarge):
		return err.Error() + "; send less, or pass large data by reference"
	case errors.As(err, &over) && !errors.Is(err, ErrPayloadTooLarge):
		return command.TooLarge("the request body", -1, over.Limit).Error()
	}
	return command.Message(err)
}

func refusalBody(err error) any {
	var refusal *contract.RefusalError
	errors.As(err, &refusal)
	return refusal.Body()
}

// notFoundBody is {"error":"not_found","key":…} for a key, and for an invocation id
// {"error":"not_found","invocation_id":…}, or in the confirm form
// {"confirmed":false,"invocation_id":…,"error":"no such invocation"}.
func notFoundBody(err error) any {
	var dn *documentNotFound
	if errors.As(err, &dn) {
		return map[string]string{
			"error": "not_found", "key": dn.key,
			"how_to_fix": "GET /api/dispatch?registry=1 lists the keys you may read (keys are case-sensitive)",
		}
	}
	var un *command.UpstreamNotFoundError
	if errors.As(err, &un) {
		return upstreamNotFoundBody(un)
	}
	var rn *receiptNotFound
	if errors.As(err, &rn) {
		if rn.confirm {
			return map[string]any{"confirmed": false, "invocation_id": clipInvocationID(rn.id), "error": "no such invocation"}
		}
		return map[string]any{"error": "not_found", "invocation_id": clipInvocationID(rn.id)}
	}
	return map[string]string{"error": "not_found", "key": command.KeyOf(err)}
}

// unauthorizedAnswer is a refused credential's own body, else the owner routes' 401.
func unauthorizedAnswer(err error) any {
	var ce *credentialError
	if errors.As(err, &ce) {
		return ce.body
	}
	return unauthorizedBody
}

// tokenRefusedBody is {"error":"<reason>","how_to_fix":…,"ran":false,"status":…},
// with the receipt's invocation id and trace when the gate refused.
func tokenRefusedBody(err error) any {
	var tr *TokenRefusedError
	errors.As(err, &tr)
	m := tokenRefusedAnswer(tr.Reason, tr.Status)
	if tr.Receipt != nil {
		m["invocation_id"], m["trace"] = tr.Receipt.InvocationID, tr.Receipt.Trace
	}
	return m
}

// inputRefusedBody is the dispatch's answer: its result says what the
// input_schema refused, its proof names the receipt.
func inputRefusedBody(err error) any {
	var ir *InputRefusedError
	errors.As(err, &ir)
	return ir.Response
}

func existsBody(err error) any {
	return map[string]string{"error": errMessage(err), "key": command.KeyOf(err)}
}

// routeBody is {"error":"not_found","path":…}, the path clipped (clipEcho), or
// {"error":"method_not_allowed","allow":"GET, HEAD"}.
func routeBody(err error) any {
	var re *routeError
	errors.As(err, &re)
	if re.allow != "" {
		return map[string]string{"error": ErrMethodNotAllowed.Error(), "allow": re.allow}
	}
	return map[string]string{"error": ErrNoRoute.Error(), "path": clipEcho(re.path)}
}

// unknownKeyBody is the refusal the worker wrote (error, attempted, did_you_mean,
// ran) with the invocation id and trace of its receipt.
func unknownKeyBody(err error) any {
	var uk *UnknownKeyError
	errors.As(err, &uk)
	return unknownKeyAnswer(&uk.Receipt)
}

func unknownKeyAnswer(rc *wire.Receipt) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	if json.Unmarshal([]byte(rc.Result), &m) != nil {
		m = map[string]json.RawMessage{"error": json.RawMessage(`"unknown_key"`), "ran": json.RawMessage(`false`)}
	}
	if rc.InvocationID != "" { // none for a refusal that wrote no receipt
		m["invocation_id"], _ = json.Marshal(rc.InvocationID)
		m["trace"], _ = json.Marshal(rc.Trace)
	}
	return m
}

// idempotencyBody is {"error":"idempotency_key_reused","message":…}.
func idempotencyBody(err error) any {
	return map[string]string{"error": dispatcher.ErrIdempotencyKeyReused.Error(), "message": errMessage(err)}
}

func healthBody(err error) any { return map[string]any{"ok": false, "error": errMessage(err)} }

// importIncompleteBody is the import's report, every row in it, with the error.
// incompleteCause is the error that ended an import that wrote rows.
func incompleteCause(err error) error {
	var rows *command.ImportIncompleteError
	if errors.As(err, &rows) {
		return rows.Err
	}
	var spec *command.SpecImportIncompleteError
	errors.As(err, &spec)
	return spec.Err
}

func specIncompleteBody(err error) any {
	var inc *command.SpecImportIncompleteError
	errors.As(err, &inc)
	res := inc.Report
	res.Error = errMessage(inc.Err)
	return res
}

func importIncompleteBody(err error) any {
	var inc *command.ImportIncompleteError
	errors.As(err, &inc)
	res := inc.Result
	res.Error = errMessage(inc.Err)
	return res
}
