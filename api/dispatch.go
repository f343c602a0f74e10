package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/capdir/capdir/api/answer"
	"github.com/capdir/capdir/command"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// OwnerActor is the credential attested for requests carrying the owner key (the
// worker believes it only on capdir's own request subject).
const OwnerActor = wire.OwnerActor

// registerDispatch adds the dispatch and receipt routes. Dispatch takes the owner
// key or a capability token (dispatch_token.go); the receipt routes are the owner's.
func (s *Server) registerDispatch() {
	s.handle("POST /api/dispatch", s.dispatchPost)
	s.handle("GET /api/dispatch", s.dispatchGet)
	s.handle("GET /api/receipts/{id}", s.owner(s.receiptOwner)) // a caller's own: GET /api/dispatch?receipt= (dispatch_wait.go)
	s.handle("GET /api/receipts", s.owner(s.receiptsByKey))
	s.handle("GET /receipt/{id}", s.receiptPublic)
}

type dispatchBody struct {
	Key   string       `json:"key"`
	Body  dispatchArgs `json:"body"`
	Shape bool         `json:"shape"`
}

func (s *Server) dispatchPost(w http.ResponseWriter, r *http.Request) error {
	tok, claims, err := s.caller(r)
	if err != nil {
		return err
	}
	idem, err := idempotency(r, claims)
	if err != nil {
		return err
	}
	in, err := readDispatchBody(w, r, s.cfg.MaxBody)
	if err != nil {
		return err
	}
	return s.dispatch(w, r, in, tok, idem)
}

// readDispatchBody decodes a dispatch body of at most limit bytes, read to its end:
// one JSON object, nothing after it. Errors: ErrPayloadTooLarge, ErrBodyTimeout, or
// an ErrBadRequest whose text is dispatchBodyError's sentence.
//
// The body is read whole into a pooled buffer. A body of the plain form
// (parseDispatchBody) is decoded by hand; any other, and every malformed one, is
// read by encoding/json's decoder, whose answer (its value or its error) is the
// API's.
func readDispatchBody(w http.ResponseWriter, r *http.Request, limit int64) (dispatchBody, error) {
	const what = "the request body"
	var in dispatchBody
	if r.ContentLength > limit {
		return in, command.TooLarge(what, r.ContentLength, limit)
	}
	bp := bodyBufs.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= maxPooledBody {
			bodyBufs.Put(bp)
		}
	}()
	if n := r.ContentLength; n > int64(cap(*bp)) && n < maxPooledBody {
		*bp = make([]byte, 0, n+1) // +1: the read that meets the end. A larger body grows the buffer as it arrives: a length declared is not memory taken before the bytes come
	}
	b, err := readAllInto((*bp)[:0], http.MaxBytesReader(w, r.Body, limit))
	*bp = b[:0]
	if err != nil {
		if errors.As(err, new(*http.MaxBytesError)) || errors.Is(err, os.ErrDeadlineExceeded) {
			return in, bodyError(err, what, r.ContentLength, limit)
		}
		return in, badRequest(dispatchBodyError(err))
	}
	if parseDispatchBody(b, &in) {
		return in, nil
	}
	in = dispatchBody{}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err = dec.Decode(&in)
	if err == nil {
		if _, err = dec.Token(); err == nil {
			err = errors.New("data after the JSON object")
		} else if err == io.EOF {
			return in, nil
		}
	}
	return in, badRequest(dispatchBodyError(err))
}

// dispatchGet serves ?confirm=inv_… (public, keyless), ?receipt=inv_… (a caller's
// own call, dispatch_wait.go), ?ask=… (ask.go), the RUN NOW
// form ?key=…&body=… (the owner or a token holder), and discovery: ?key=…&format=…
// and ?registry=1.
func (s *Server) dispatchGet(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if inv := q.Get("confirm"); inv != "" {
		return s.confirm(w, r, inv)
	}
	if q.Has("receipt") {
		return s.dispatchReceipt(w, r, q.Get("receipt"))
	}
	if q.Has("ask") {
		return s.askGet(w, r)
	}
	if isDiscovery(q) {
		return s.discoveryGet(w, r)
	}
	if q.Get("key") == "" {
		return badRequest("GET /api/dispatch needs ?confirm=inv_…, ?receipt=inv_…, ?ask=plain+words, ?key=KEY&body=ARGS, ?key=KEY&format=markdown (or json) or ?registry=1")
	}
	if err := invokeQueryError(q); err != nil {
		return err
	}
	tok, claims, err := s.caller(r)
	if err != nil {
		return err
	}
	idem, err := idempotency(r, claims)
	if err != nil {
		return err
	}
	body := q.Get("body")
	if !utf8.ValidString(body) {
		// A POST's JSON string holds text only; so does this form: raw bytes
		// would run as the log's text of them and be no longer the request an
		// Idempotency-Key sent again repeats.
		return badRequest("body= is not UTF-8: send the arguments as UTF-8 text, percent-encoded (GET /api/dispatch?key=KEY&body=ARGS)")
	}
	shape, _ := strconv.ParseBool(q.Get("shape"))
	return s.dispatch(w, r, dispatchBody{Key: q.Get("key"), Body: dispatchArgs{Pipe: body}, Shape: shape}, tok, idem)
}

// invokeParams are the query parameters of GET /api/dispatch?key=KEY&body=ARGS.
var invokeParams = []string{"key", "body", "shape"}

// invokeQueryError refuses an invocation by GET whose query names a parameter
// twice, or one the form does not read: a misspelled body= would otherwise run
// the call with no arguments, and a second key= or body= would be left unread.
func invokeQueryError(q url.Values) error {
	for p, vs := range q {
		switch {
		case !slices.Contains(invokeParams, p):
			return badRequest(fmt.Sprintf("%s= is not a parameter of GET /api/dispatch?key=KEY&body=ARGS (which reads key=, body= and shape=): leave it out, or fix its name; nothing was run", clipParam(p)))
		case len(vs) > 1:
			return badRequest(fmt.Sprintf("%s= appears %d times; send it once; nothing was run", p, len(vs)))
		}
	}
	return nil
}

// dispatch invokes the row for the owner (tok empty) or the holder of tok; once
// per Idempotency-Key when idem is not nil.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request, in dispatchBody, tok string, idem *dispatcher.Idempotency) error {
	if s.cfg.Dispatcher == nil {
		return ErrNoDispatcher
	}
	if in.Key == "" {
		return badRequest(`"key" is required`)
	}
	if err := s.argsRefused(in, tok); err != nil {
		return err
	}
	r, sp := s.traceFacade(r, in.Key)
	defer sp.End()
	req := wire.InvocationRequest{Key: in.Key, Body: in.Body.Pipe, Args: in.Body.Args, Shape: in.Shape, Credential: OwnerActor}
	if tok != "" {
		req.Credential, req.Token = wire.BearerCredential, tok
	}
	var rc wire.Receipt
	var err error
	if idem != nil {
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.DispatchWait)
		rc, err = s.cfg.Dispatcher.InvokeOnce(ctx, req, *idem)
		cancel()
	} else {
		rc, err = s.cfg.Dispatcher.InvokeWait(r.Context(), req, s.cfg.DispatchWait)
	}
	if err != nil {
		return s.dispatchFailed(w, in.Key, &rc, err)
	}
	return s.answer(w, &rc)
}

// dispatchFailed answers a dispatch whose Invoke returned err, rc the partial
// receipt it came with. Apart from dispatch, so that what it reads the error
// into is allocated only for a call that failed.
func (s *Server) dispatchFailed(w http.ResponseWriter, key string, rc *wire.Receipt, err error) error {
	var repeat *dispatcher.RefusedError
	switch {
	case errors.As(err, &repeat):
		return repeatRefused(key, repeat)
	case errors.Is(err, dispatcher.ErrPending):
		writeJSON(w, http.StatusAccepted, s.runningAnswer(rc.InvocationID, rc.Trace))
		return nil
	case errors.As(err, new(*contract.ValidationError)), errors.Is(err, dispatcher.ErrPayloadTooLarge),
		errors.Is(err, dispatcher.ErrBadIdempotencyKey), errors.Is(err, dispatcher.ErrIdempotencyKeyReused):
		return err // the key, which Invoke checks; a body over the ceiling; the Idempotency-Key
	}
	return newError(ErrDispatchFailed, "dispatch failed: %w", err)
}

// answer writes the answer to the call whose receipt (or held state) is rc: 200
// with its result and proof, 202 while it waits for the owner's approval, or the
// error its refusal is answered with.
func (s *Server) answer(w http.ResponseWriter, rc *wire.Receipt) error {
	if rc.Status == wire.StatusPendingApproval {
		writeJSON(w, http.StatusAccepted, s.pendingApprovalAnswer(rc.InvocationID, rc.Trace))
		return nil
	}
	if rc.Status == wire.StatusRefusedUnknownKey {
		return &UnknownKeyError{Receipt: *rc}
	}
	if err := tokenRefusal(rc); err != nil {
		return err
	}
	out := DispatchResponse{OK: rc.OK, Ran: rc.Ran, Trace: rc.Trace, Proof: s.proof(rc), result: rc.Result}
	out.Result = &out.result // the answer's own copy: the receipt stays off the heap
	if rc.Status == wire.StatusShapeOnly {
		out.Result = nil
		out.Shape = rc.Extra["shape"]
	}
	if rc.Status == wire.StatusRefusedInput {
		return &InputRefusedError{Response: out}
	}
	writeDispatchResponse(w, &out)
	return nil
}

// repeatRefused is the answer to a request repeating an earlier one (its
// Idempotency-Key) that the gate refuses for the credential presented now: the
// answer a fresh call refused alike gets, without a receipt (none was written).
// A check this node could not make (ERR:directory:…, ERR:revocation:…) is 503.
func repeatRefused(key string, rf *dispatcher.RefusedError) error {
	if _, ok := tokenRefusalKinds[rf.Status]; ok {
		return &TokenRefusedError{Status: rf.Status, Reason: rf.Reason}
	}
	if rf.Status == wire.StatusRefusedUnknownKey {
		return &UnknownKeyError{Receipt: wire.Receipt{ReceiptSummary: wire.ReceiptSummary{Key: key, Status: rf.Status}, Result: rf.Reason}}
	}
	return newError(ErrUnavailable, "%s", rf.Reason)
}

// IdempotencyHeader names the header that makes a dispatch run once however often
// it is sent (see dispatcher.Service.InvokeOnce).
const IdempotencyHeader = "Idempotency-Key"

// idempotency reads r's Idempotency-Key for the caller claims name (nil: the
// owner): nil when r has none; ErrBadIdempotencyKey when it is not 1 to 255
// visible ASCII characters or is sent more than once.
func idempotency(r *http.Request, claims *token.Claims) (*dispatcher.Idempotency, error) {
	key, err := dispatcher.IdempotencyKeyOf(r.Header.Values(IdempotencyHeader))
	if key == "" || err != nil {
		return nil, err
	}
	actor := OwnerActor
	if claims != nil {
		actor = wire.TokenActor(claims.Subject)
	}
	return &dispatcher.Idempotency{Actor: actor, Key: key}, nil
}

// DispatchResponse is the answer to a completed dispatch, in the documented field order.
type DispatchResponse struct {
	OK     bool    `json:"ok"`
	Ran    bool    `json:"ran"`
	Trace  string  `json:"trace"`
	Result *string `json:"result,omitempty"`
	Shape  any     `json:"shape,omitempty"`
	Proof  Proof   `json:"proof"`

	result string // what Result points at, when answer sets it
}

// Proof points at the receipt of a dispatch: api/answer's, which the Go client
// reads too.
type Proof = answer.Proof

func (s *Server) proof(rc *wire.Receipt) Proof {
	return Proof{
		OK: rc.OK, InvocationID: rc.InvocationID, Status: rc.Status,
		PublicReceipt: s.PublicReceiptURL(rc.InvocationID),
	}
}

// PublicReceiptURL is where anyone reads the public view of invocation id's receipt.
func (s *Server) PublicReceiptURL(id string) string {
	return strings.TrimRight(s.cfg.PublicURL, "/") + "/receipt/" + id
}

// receipt looks an invocation's receipt up. pending is true while the invocation
// has a request and no receipt yet; an unknown id is ErrNotFound (confirm says which
// form asked, for its answer), a failing projection ErrUnavailable.
func (s *Server) receipt(r *http.Request, id string, confirm bool) (rc wire.Receipt, pending bool, err error) {
	return s.lookupReceipt(r.Context(), id, confirm, r.URL.Path)
}

// lookupReceipt is receipt within ctx; what names the read in the log.
func (s *Server) lookupReceipt(ctx context.Context, id string, confirm bool, what string) (rc wire.Receipt, pending bool, err error) {
	rc, pending, err = s.cfg.Projector.Receipt(id)
	if errors.Is(err, projector.ErrNotFound) {
		// The receipt may be in the log and not yet folded here (a dispatch answers
		// as soon as its receipt is appended): look again once this node has caught up.
		s.settleCtx(ctx, wire.DataStream, what)
		rc, pending, err = s.cfg.Projector.Receipt(id)
	}
	switch {
	case err == nil, pending:
		return rc, pending, nil
	case errors.Is(err, projector.ErrNotFound):
		return rc, false, &receiptNotFound{id: id, confirm: confirm}
	}
	return rc, false, newError(ErrUnavailable, "%w", err)
}

// confirm is the public, keyless check that an invocation proved a result:
// "confirmed" is true only for a receipt PROVEN_MATERIAL_RESULT. Any other
// receipt (a refusal, an error, shape mode) is 200 with "confirmed": false and
// its status; a call without a receipt yet is 202 PENDING.
func (s *Server) confirm(w http.ResponseWriter, r *http.Request, inv string) error {
	rc, pending, err := s.receipt(r, inv, true)
	switch {
	case err != nil:
		return err
	case pending:
		writeJSON(w, http.StatusAccepted, map[string]any{"confirmed": false, "invocation_id": inv, "status": "PENDING"})
	default:
		writeJSON(w, http.StatusOK, map[string]any{"confirmed": rc.Status == wire.StatusProvenMaterialResult, "invocation_id": rc.InvocationID, "status": rc.Status})
	}
	return nil
}

// receiptOwner is the whole receipt, arguments and result included, with its
// steps' receipts nested (receipt_tree.go).
func (s *Server) receiptOwner(w http.ResponseWriter, r *http.Request) error {
	return s.writeReceipt(w, r, func(rc *wire.Receipt) any { return s.receiptTree(*rc) })
}

// Receipt is the owner's view of invocation id's receipt, as GET /api/receipts/{id}
// answers it: the whole receipt with its steps' receipts nested. pending is true
// (and the tree nil) while the invocation has a request and no receipt yet. Errors:
// ErrNotFound for an id with neither, ErrUnavailable.
func (s *Server) Receipt(ctx context.Context, id string) (tree *ReceiptTree, pending bool, err error) {
	rc, pending, err := s.lookupReceipt(ctx, id, false, "receipt")
	if err != nil || pending {
		return nil, pending, err
	}
	return s.receiptTree(rc), false, nil
}

// receiptPublic is the keyless view (wire.PublicReceipt): the receipt's summary and
// contract fingerprint, its input and output fingerprints only keyed with a salt the
// owner's view alone shows; no arguments, no result, nothing credential-related,
// nothing to test a guess about them against.
func (s *Server) receiptPublic(w http.ResponseWriter, r *http.Request) error {
	return s.writeReceipt(w, r, s.publicReceipt) // with its place in the ledger (ledger.go)
}

// writeReceipt answers the receipt of the path's id in the view view gives, or 202
// {"pending":true,…} while it is pending.
func (s *Server) writeReceipt(w http.ResponseWriter, r *http.Request, view func(*wire.Receipt) any) error {
	id := r.PathValue("id")
	rc, pending, err := s.receipt(r, id, false)
	switch {
	case err != nil:
		return err
	case pending:
		writeJSON(w, http.StatusAccepted, map[string]any{"pending": true, "invocation_id": id})
	default:
		writeJSON(w, http.StatusOK, view(&rc))
	}
	return nil
}

// receiptsByKey lists a key's receipts, newest first (?key=K&limit=N).
func (s *Server) receiptsByKey(w http.ResponseWriter, r *http.Request) error {
	key := r.URL.Query().Get("key")
	if key == "" {
		return badRequest("GET /api/receipts needs ?key=KEY (and optionally &limit=N, at most 1000)")
	}
	limit, err := listLimit(r)
	if err != nil {
		return err
	}
	s.settle(r)
	rcs, err := s.cfg.Projector.ReceiptsByKey(key, limit)
	if err != nil {
		return newError(ErrUnavailable, "%w", err)
	}
	if rcs == nil {
		rcs = []wire.Receipt{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"key": key, "receipts": rcs})
	return nil
}

// listLimit is a list route's ?limit=: 100 when absent, else an integer from 1 to
// 1000 (ErrBadRequest otherwise).
func listLimit(r *http.Request) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return 100, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 1000 {
		return 0, badRequest("limit must be an integer from 1 to 1000")
	}
	return n, nil
}

// settle waits until this node has folded everything the data stream held when the
// request arrived, so a read after a dispatch sees its receipt and its effect on the
// breaker. When the log cannot be asked in time the read answers from the
// projection as it is.
func (s *Server) settle(r *http.Request) { s.settleStream(r, wire.DataStream) }

// settleStream is settle for any stream of the log (the control stream for approvals).
func (s *Server) settleStream(r *http.Request, stream string) {
	s.settleCtx(r.Context(), stream, r.URL.Path)
}

// settleCtx is settleStream for a read within ctx; what names the read in the log
// (a request's path, clipped there as a 404 quotes it).
func (s *Server) settleCtx(ctx context.Context, stream, what string) {
	wait, cancel := s.cfg.Projector.WaitContext(ctx)
	defer cancel()
	if err := s.cfg.Projector.Settle(wait, stream); err != nil && ctx.Err() == nil {
		s.cfg.Logger.Warn("api: read answered before the projection caught up", "path", clipEcho(what), "err", err)
	}
}
