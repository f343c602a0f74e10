package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// OwnerActor is the credential attested for requests carrying the owner key (the
// worker believes it only on capdir's own request subject).
const OwnerActor = wire.OwnerActor

// registerDispatch adds the dispatch and receipt routes. Dispatch takes the owner
// key or a capability token (dispatch_token.go); the receipt routes are the owner's.
func (s *Server) registerDispatch() {
	s.mux.HandleFunc("POST /api/dispatch", s.dispatchPost)
	s.mux.HandleFunc("GET /api/dispatch", s.dispatchGet)
	s.mux.HandleFunc("GET /api/receipts/{id}", s.owner(s.receiptOwner))
	s.mux.HandleFunc("GET /api/receipts", s.owner(s.receiptsByKey))
	s.mux.HandleFunc("GET /receipt/{id}", s.receiptPublic)
}

type dispatchBody struct {
	Key   string       `json:"key"`
	Body  dispatchArgs `json:"body"`
	Shape bool         `json:"shape"`
}

func (s *Server) dispatchPost(w http.ResponseWriter, r *http.Request) {
	tok, ok := s.dispatchCaller(w, r)
	if !ok {
		return
	}
	in, err := readDispatchBody(w, r, s.cfg.MaxBody)
	if err != nil {
		writeError(w, dirStatus(err), err.Error())
		return
	}
	s.dispatch(w, r, in, tok)
}

// readDispatchBody decodes a dispatch body of at most limit bytes, read to its end:
// one JSON object, nothing after it. Errors: errPayloadTooLarge, errBodyTimeout, or
// errMalformedDispatch.
func readDispatchBody(w http.ResponseWriter, r *http.Request, limit int64) (dispatchBody, error) {
	const what = "the request body"
	var in dispatchBody
	if r.ContentLength > limit {
		return in, tooLarge(what, r.ContentLength, limit)
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	err := dec.Decode(&in)
	if err == nil {
		if _, err = dec.Token(); err == nil {
			err = errors.New("data after the JSON object")
		} else if err == io.EOF {
			return in, nil
		}
	}
	if errors.As(err, new(*http.MaxBytesError)) || errors.Is(err, os.ErrDeadlineExceeded) {
		return in, bodyError(err, what, r.ContentLength, limit)
	}
	return in, malformedDispatch(dispatchBodyError(err))
}

// dispatchGet serves ?confirm=inv_… (public, keyless), ?ask=… (ask.go), the RUN NOW
// form ?key=…&body=… (the owner or a token holder), and discovery: ?key=…&format=…
// and ?registry=1.
func (s *Server) dispatchGet(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if inv := q.Get("confirm"); inv != "" {
		s.confirm(w, r, inv)
		return
	}
	if q.Has("ask") {
		s.askGet(w, r)
		return
	}
	if isDiscovery(q) {
		s.discoveryGet(w, r)
		return
	}
	if q.Get("key") == "" {
		writeError(w, http.StatusBadRequest, "GET /api/dispatch needs ?confirm=inv_…, ?ask=plain+words, ?key=KEY&body=ARGS, ?key=KEY&format=markdown (or json) or ?registry=1")
		return
	}
	tok, ok := s.dispatchCaller(w, r)
	if !ok {
		return
	}
	shape, _ := strconv.ParseBool(q.Get("shape"))
	s.dispatch(w, r, dispatchBody{Key: q.Get("key"), Body: dispatchArgs{Pipe: q.Get("body")}, Shape: shape}, tok)
}

// dispatch invokes the row for the owner (tok empty) or the holder of tok.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request, in dispatchBody, tok string) {
	if s.cfg.Dispatcher == nil {
		writeError(w, http.StatusServiceUnavailable, "dispatch is not running on this node")
		return
	}
	if in.Key == "" {
		writeError(w, http.StatusBadRequest, `"key" is required`)
		return
	}
	if err := s.argsRefused(in, tok); err != nil {
		writeError(w, dirStatus(err), err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.DispatchWait)
	defer cancel()
	req := eventlog.InvocationRequest{Key: in.Key, Body: in.Body.Pipe, Args: in.Body.Args, Shape: in.Shape, Credential: OwnerActor}
	if tok != "" {
		req.Credential, req.Token = wire.BearerCredential, tok
	}
	rc, err := s.cfg.Dispatcher.Invoke(ctx, req)
	switch {
	case errors.Is(err, dispatcher.ErrPending):
		writeJSON(w, http.StatusAccepted, map[string]any{
			"ok": nil, "pending": true, "trace": rc.Trace, "invocation_id": rc.InvocationID,
			"receipt": "/api/receipts/" + rc.InvocationID,
		})
		return
	case errors.As(err, new(*contract.ValidationError)):
		writeError(w, http.StatusBadRequest, err.Error()) // the key: Invoke checks it
		return
	case errors.Is(err, dispatcher.ErrPayloadTooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, err.Error()+"; send less, or pass large data by reference")
		return
	case err != nil:
		writeError(w, http.StatusBadGateway, "dispatch failed: "+err.Error())
		return
	}
	if rc.Status == wire.StatusPendingApproval {
		writeJSON(w, http.StatusAccepted, pendingApprovalAnswer(&rc))
		return
	}
	if rc.Status == wire.StatusRefusedUnknownKey {
		writeJSON(w, http.StatusNotFound, unknownKeyAnswer(&rc))
		return
	}
	if code := tokenRefusalStatus(rc.Status); code != 0 {
		writeJSON(w, code, tokenRefusedReceipt(&rc))
		return
	}
	out := DispatchResponse{OK: rc.OK, Ran: rc.Ran, Trace: rc.Trace, Result: &rc.Result, Proof: s.proof(&rc)}
	if rc.Status == wire.StatusShapeOnly {
		out.Result = nil
		out.Shape = rc.Extra["shape"]
	}
	writeJSON(w, dispatchStatus(rc.Status), out)
}

// DispatchResponse is the answer to a completed dispatch, in the article's field order.
type DispatchResponse struct {
	OK     bool    `json:"ok"`
	Ran    bool    `json:"ran"`
	Trace  string  `json:"trace"`
	Result *string `json:"result,omitempty"`
	Shape  any     `json:"shape,omitempty"`
	Proof  Proof   `json:"proof"`
}

// Proof points at the receipt of a dispatch.
type Proof struct {
	OK            bool   `json:"ok"`
	InvocationID  string `json:"invocation_id"`
	PublicReceipt string `json:"public_receipt"`
	Status        string `json:"status"`
}

func (s *Server) proof(rc *eventlog.Receipt) Proof {
	return Proof{
		OK: rc.OK, InvocationID: rc.InvocationID, Status: rc.Status,
		PublicReceipt: strings.TrimRight(s.cfg.PublicURL, "/") + "/receipt/" + rc.InvocationID,
	}
}

// receipt looks an invocation's receipt up. When there is none yet it answers for
// the caller: 202 while the invocation is pending, 404 when it is unknown (in the
// confirm form, {"confirmed":false,…}), 500 when the projection fails.
func (s *Server) receipt(w http.ResponseWriter, r *http.Request, id string, confirmForm bool) (eventlog.Receipt, bool) {
	rc, pending, err := s.cfg.Projector.Receipt(id)
	if errors.Is(err, projector.ErrNotFound) {
		// The receipt may be in the log and not yet folded here (a dispatch answers
		// as soon as its receipt is appended): look again once this node has caught up.
		s.settle(r)
		rc, pending, err = s.cfg.Projector.Receipt(id)
	}
	switch {
	case err == nil:
		return rc, true
	case pending && confirmForm:
		writeJSON(w, http.StatusAccepted, map[string]any{"confirmed": false, "invocation_id": id, "status": "PENDING"})
	case pending:
		writeJSON(w, http.StatusAccepted, map[string]any{"pending": true, "invocation_id": id})
	case errors.Is(err, projector.ErrNotFound) && confirmForm:
		writeJSON(w, http.StatusNotFound, map[string]any{"confirmed": false, "invocation_id": id, "error": "no such invocation"})
	case errors.Is(err, projector.ErrNotFound):
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "not_found", "invocation_id": id})
	default:
		writeError(w, http.StatusInternalServerError, err.Error())
	}
	return rc, false
}

// confirm is the public, keyless check that an invocation has a receipt.
func (s *Server) confirm(w http.ResponseWriter, r *http.Request, inv string) {
	if rc, ok := s.receipt(w, r, inv, true); ok {
		writeJSON(w, http.StatusOK, map[string]any{"confirmed": true, "invocation_id": rc.InvocationID, "status": rc.Status})
	}
}

// receiptOwner is the whole receipt, arguments and result included, with its
// steps' receipts nested (receipt_tree.go).
func (s *Server) receiptOwner(w http.ResponseWriter, r *http.Request) {
	if rc, ok := s.receipt(w, r, r.PathValue("id"), false); ok {
		writeJSON(w, http.StatusOK, s.receiptTree(rc))
	}
}

// receiptsByKey lists a key's receipts, newest first (?key=K&limit=N).
func (s *Server) receiptsByKey(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if key == "" {
		writeError(w, http.StatusBadRequest, "GET /api/receipts needs ?key=KEY (and optionally &limit=N, at most 1000)")
		return
	}
	limit := 100
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, http.StatusBadRequest, "limit must be an integer from 1 to 1000")
			return
		}
		limit = n
	}
	s.settle(r)
	rcs, err := s.cfg.Projector.ReceiptsByKey(key, limit)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if rcs == nil {
		rcs = []eventlog.Receipt{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"key": key, "receipts": rcs})
}

// receiptPublic is the keyless view: the receipt's summary, without arguments,
// result or anything credential-related.
func (s *Server) receiptPublic(w http.ResponseWriter, r *http.Request) {
	if rc, ok := s.receipt(w, r, r.PathValue("id"), false); ok {
		writeJSON(w, http.StatusOK, rc.ReceiptSummary)
	}
}

// settleWait bounds how long a read waits for this node's projection to catch up.
const settleWait = 5 * time.Second

// settle waits until this node has folded everything the data stream held when the
// request arrived, so a read after a dispatch sees its receipt and its effect on the
// breaker. When the log cannot be asked in time the read answers from the
// projection as it is.
func (s *Server) settle(r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), settleWait)
	defer cancel()
	if err := s.cfg.Projector.Settle(ctx, eventlog.DataStream); err != nil && r.Context().Err() == nil {
		s.cfg.Logger.Warn("api: read answered before the projection caught up", "path", r.URL.Path, "err", err)
	}
}
