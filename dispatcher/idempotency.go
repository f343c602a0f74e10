package dispatcher

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/capdir/capdir/dispatcher/gate"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// MaxIdempotencyKeyLen bounds an Idempotency-Key.
const MaxIdempotencyKeyLen = 255

// Idempotency names a request its caller may send more than once and wants run
// once: the caller (the owner's attestation, or a token's subject as
// wire.TokenActor names it) and the key it chose.
type Idempotency struct {
	Actor string
	Key   string
}

// CheckIdempotencyKey returns nil for a key of 1 to MaxIdempotencyKeyLen visible
// ASCII characters ('!' to '~'), else an error matching ErrBadIdempotencyKey that
// says so.
func CheckIdempotencyKey(key string) error {
	ok := len(key) >= 1 && len(key) <= MaxIdempotencyKeyLen
	for i := 0; ok && i < len(key); i++ {
		ok = key[i] > ' ' && key[i] < 0x7f
	}
	if ok {
		return nil
	}
	return fmt.Errorf("%w: an Idempotency-Key is 1 to %d visible ASCII characters ('!' to '~': no spaces, no control or non-ASCII characters); got %d bytes",
		ErrBadIdempotencyKey, MaxIdempotencyKeyLen, len(key))
}

// IdempotencyKeyOf is the Idempotency-Key among a request's values of that
// header, as every entry point reads it: "" when there is none; an error matching
// ErrBadIdempotencyKey when it is sent more than once or CheckIdempotencyKey
// refuses it.
func IdempotencyKeyOf(vals []string) (string, error) {
	switch {
	case len(vals) == 0:
		return "", nil
	case len(vals) > 1:
		return "", fmt.Errorf("%w: send one Idempotency-Key header, not %d", ErrBadIdempotencyKey, len(vals))
	}
	if err := CheckIdempotencyKey(vals[0]); err != nil {
		return "", err
	}
	return vals[0], nil
}

// InvokeOnce is Invoke for a request its caller may send again: sent any number
// of times under one Idempotency (from any node), it runs once, and every copy is
// answered with the same receipt. Its invocation id is derived from the caller
// and the key (receiptIDs.idempotent). When the projection, caught up with the
// log, already holds a request under that id, nothing is appended: InvokeOnce
// answers its receipt, or waits for it; a request there that is not this one (another key,
// body, arguments or shape) is refused with ErrIdempotencyKeyReused, unless its
// token could not make it: then with the refusal a fresh call gets, as the same
// request would be, so a mismatch confirms no guess of the first. Otherwise
// the request is appended under an event id derived from the invocation id, so
// that copies sent at once inside the log's duplicate window are stored once;
// the worker does not run a copy that got past both (see duplicate).
//
// The key names a call of the caller (the owner, or a token's subject), not of
// one token: a client retrying with a refreshed token gets the one call. An
// earlier call's receipt, or the wait for it, is a token holder's only if the
// token it presents now passes the gate's access checks for the call
// (gate.Gate.Access: not revoked, in scope, within its pin, risk ceiling, fixed
// body and payload ceiling); otherwise InvokeOnce returns a *RefusedError with
// the refusal a fresh call would get.
func (s *Service) InvokeOnce(ctx context.Context, req wire.InvocationRequest, idem Idempotency) (wire.Receipt, error) {
	if err := CheckIdempotencyKey(idem.Key); err != nil {
		return wire.Receipt{}, err
	}
	if err := s.checkInvoke(&req); err != nil {
		return wire.Receipt{}, err
	}
	owner := req.Credential == wire.OwnerActor // capdir's entry points write it for the owner alone
	req.InvocationID = s.waiters.ids.idempotent(idem.Actor, idem.Key)
	sp := traceAppend(ctx, &req)
	defer sp.End()
	ev, err := wire.PrepareRequest(s.cfg.Clock(), &req)
	if err != nil {
		return wire.Receipt{}, err
	}
	ev.ID = s.waiters.ids.idemRequest(req.InvocationID)
	// Wait first, then look: a receipt appended after the look wakes the waiter,
	// one appended before it is in the settled projection.
	ch := s.waiters.add(req.InvocationID)
	sctx, cancel := s.cfg.Projector.WaitContext(ctx)
	settled := true
	if err := s.cfg.Projector.Settle(sctx, wire.DataStream); err != nil && ctx.Err() == nil {
		settled = false
		s.cfg.Logger.Warn("dispatcher: idempotent request checked against a lagging projection", "invocation", req.InvocationID, "err", err)
	}
	cancel()
	first, err := s.cfg.Projector.Invocation(req.InvocationID)
	switch {
	case errors.Is(err, projector.ErrNotFound):
		f, err := s.cfg.Log.AppendAsync(wire.RequestSubject(req.Key), ev)
		if err != nil {
			s.waiters.remove(req.InvocationID, ch)
			return pendingReceipt(&req), err
		}
		rc, err := s.await(ctx, 0, &req, ch, f, &ev)
		if err == nil && !(settled && storedFirst(ctx, f)) {
			// Another request under the id may have been stored first (sent at
			// once, under another token of the caller's; or before the log's
			// duplicate window, unseen by a lagging projection): its receipt is
			// ours only as a fresh call's would be. Ours stored first, the
			// receipt is our own call's, admitted by the gate when it ran: given
			// as a call without a key would be, whatever became of the token since.
			err = s.mayHave(ctx, &req, owner, &rc)
		}
		return rc, err
	case err != nil:
		s.waiters.remove(req.InvocationID, ch)
		return pendingReceipt(&req), err
	case !sameRequest(&first, &req, ""):
		s.waiters.remove(req.InvocationID, ch)
		// A request its token could not make is refused as a fresh call is, as
		// the same request would be: a 422 here against a refusal for the same
		// request would tell a narrower token of the subject which key and
		// arguments the subject's call had.
		if err := s.mayHave(ctx, &req, owner, nil); err != nil {
			return wire.Receipt{}, err
		}
		return wire.Receipt{}, fmt.Errorf("%w: this Idempotency-Key was already used for another request (another key, body, arguments or shape); "+
			"send the same request again to get its receipt, or use a new key for a new call", ErrIdempotencyKeyReused)
	case first.Receipt != nil:
		s.waiters.remove(req.InvocationID, ch)
		var rc wire.Receipt
		if err := json.Unmarshal(first.Receipt, &rc); err != nil {
			return pendingReceipt(&req), fmt.Errorf("dispatcher: receipt of %s: %w", req.InvocationID, err)
		}
		if err := s.mayHave(ctx, &req, owner, &rc); err != nil {
			return wire.Receipt{}, err
		}
		return rc, nil
	}
	// Requested, not yet receipted (running, or held for approval): nothing to
	// append, and the wait is the caller's only if the call would be, and the
	// receipt once it comes only if the call would be then (the token may have
	// been revoked or expired meanwhile).
	if err := s.mayHave(ctx, &req, owner, nil); err != nil {
		s.waiters.remove(req.InvocationID, ch)
		return wire.Receipt{}, err
	}
	rc, err := s.await(ctx, 0, &req, ch, nil, nil)
	if err == nil {
		err = s.mayHave(ctx, &req, owner, &rc)
	}
	return rc, err
}

// storedFirst reports whether the log stored f's request as a new message: the
// first under its event id, which every request under one Idempotency-Key
// shares, so the request the workers ran. Called once the receipt has come,
// which implies the request is stored: its acknowledgement is at hand or about
// to be. False when it failed or was lost (the request may then be another's).
func storedFirst(ctx context.Context, f *eventlog.Pending) bool {
	if ack, ok := f.Acknowledged(); ok { // a wait may have taken Stored's already
		return !ack.Duplicate
	}
	select {
	case ack := <-f.Stored():
		return !ack.Duplicate
	case <-f.Failed():
	case <-ctx.Done():
	}
	return false
}

// repeatRefusal is the gate's refusal, now, of req's caller having the answer of
// an earlier request req repeats (gate.Gate.Access, with the row and the
// revocations as this node has folded them): nil when it passes, and for the
// owner, who may read every receipt. rc is the earlier request's receipt, nil
// when it has none yet: when it is itself the refusal the gate gives now, it is
// the answer a fresh call would get, and it is not refused.
func (s *Service) repeatRefusal(ctx context.Context, req *wire.InvocationRequest, owner bool, rc *wire.Receipt) *gate.Refusal {
	if owner {
		return nil
	}
	g := s.cfg.Projector.Gate(req.Key, "")
	if errors.Is(g.RowErr, projector.ErrNotFound) {
		g = s.catchUpRow(ctx, req, "", g)
	}
	in := gateInput(req, &g)
	s.catchUpRevocation(ctx, &in)
	r := s.gate.Access(&in)
	if r == nil || rc != nil && rc.Status == r.Status && rc.Result == r.Literal {
		return nil
	}
	return r
}

// MayRead reports whether the holder of the capability token raw may have rc,
// the receipt of a call its token's subject made, now: the gate's access checks
// (gate.Gate.Access) for rc's key and body with that token, as a repeat of the
// call is checked. nil, or a *RefusedError with the refusal a fresh call would
// get. A caller's wait for its own call (GET /api/dispatch?receipt=) reads
// through it, so a token of the subject that could not make the call now does
// not read its result.
//
// A token whose fixed body or payload ceiling the call's arguments do not fit
// gets ErrCallWithheld instead: the refusal a fresh call gets quotes what it
// sent (the first 16 hex digits of its SHA-256, its size), here what another
// token of the subject sent, which would let its holder test guesses of them.
func (s *Service) MayRead(ctx context.Context, raw string, rc *wire.Receipt) error {
	req := wire.InvocationRequest{Key: rc.Key, Body: rc.Body, Credential: wire.BearerCredential, Token: raw}
	if r := s.repeatRefusal(ctx, &req, false, rc); r != nil {
		if r.OfTheArguments() {
			return ErrCallWithheld
		}
		return refusedError(r)
	}
	return nil
}

// mayHave is repeatRefusal as InvokeOnce's error: a *RefusedError, or nil.
func (s *Service) mayHave(ctx context.Context, req *wire.InvocationRequest, owner bool, rc *wire.Receipt) error {
	if r := s.repeatRefusal(ctx, req, owner, rc); r != nil {
		return refusedError(r)
	}
	return nil
}

// refusedError is the gate's refusal r of a repeated request, as an error.
func refusedError(r *gate.Refusal) *RefusedError {
	return &RefusedError{Status: r.Status, Reason: r.Literal, Extra: r.Extra}
}

// sameRequest reports whether req, from the bus client client ("" for capdir's own
// subject), is the request first stood for: the same sender and the same digest
// (the key alone for a first request folded without one).
func sameRequest(first *projector.Invocation, req *wire.InvocationRequest, client string) bool {
	if first.Client != client {
		return false
	}
	if !first.HasDigest {
		return first.Key == req.Key
	}
	d := req.Digest()
	return hmac.Equal(first.Digest[:], d[:])
}

// duplicate reports whether the request m carries repeats an earlier request
// under the same invocation id, and if so answers it without running anything
// and without a second receipt. Only a request with a chosen invocation id (an
// Idempotency-Key's, a bus client's WithInvocationID; see wire.Chosen) is looked
// up, after this node has folded everything before it in the log; capdir's re-run
// of an approved call is not a duplicate. The answer: capdir's own callers of
// this node waiting on the id are woken with the existing receipt (those of other
// nodes are woken by it already); the bus client that sent the first request gets
// the receipt again on its notice subject (unless the token it sends now would
// not let it make the call: then an INVOCATION_REFUSED notice with the gate's
// refusal, see repeatRefusal), or, when it sent another request under
// the id, an INVOCATION_REFUSED notice. A bus client's request under an id
// another sender took first is its own call, under the id scoped to it
// (wire.ScopedInvocationID): req's id is set to it, and it is looked up there,
// so nothing of another caller's call reaches it. Without a receipt yet, the first request's
// receipt will be announced to the same subject. looked is false when the
// projection could not be brought up to the request (see settled): m must not run
// now.
func (s *Service) duplicate(ctx context.Context, m eventlog.Msg, req *wire.InvocationRequest, from sender, md *eventlog.MsgMetadata) (dup, looked bool) {
	if md == nil || from.client == "" && !wire.Chosen(req.InvocationID, from.eventID) ||
		hmac.Equal([]byte(from.eventID), []byte(s.waiters.ids.rerun(req.InvocationID))) {
		return false, true // a bus client's id is looked up even when derived: it may be another's
	}
	seq := md.StreamSeq
	first, looked, err := s.invocationBefore(ctx, m, req.InvocationID, from.client, seq)
	if !looked {
		return false, false
	}
	if err == nil && from.client != "" && first.Seq != 0 && first.Seq < seq && first.Client != from.client {
		// Another sender's id: this client's call runs under the id scoped to
		// it, as the fold records it, and is looked up there.
		req.InvocationID = wire.ScopedInvocationID(from.client, req.InvocationID)
		if first, looked, err = s.invocationBefore(ctx, m, req.InvocationID, from.client, seq); !looked {
			return false, false
		}
	}
	if errors.Is(err, projector.ErrNotFound) || err == nil && (first.Seq == 0 || first.Seq >= seq) {
		return false, true // the first request under this id (or one folded before the sequence was kept: the receipt check holds)
	}
	if err != nil {
		return false, false
	}
	rc := firstReceipt(&first)
	switch {
	case from.client == "":
		if rc != nil && sameRequest(&first, req, "") {
			s.waiters.deliver(rc)
		}
	case first.Client != from.client: // a record too old to name its sender
		s.cfg.Logger.Info("dispatcher: a bus client's request under another caller's invocation id not run", "client", from.client, "invocation", req.InvocationID)
	default:
		if typ, data := s.repeatAnswer(ctx, &first, rc, req, from.client); typ != "" {
			s.notice(from.client, req, typ, data)
		}
	}
	return true, true
}

// firstReceipt is the receipt first's invocation has in the projection; nil
// while it has none.
func firstReceipt(first *projector.Invocation) *wire.Receipt {
	if first.Receipt == nil {
		return nil
	}
	rc := new(wire.Receipt)
	if err := json.Unmarshal(first.Receipt, rc); err != nil {
		return nil
	}
	return rc
}

// repeatAnswer is what the bus client client, which sent first, is told of req,
// a request under first's invocation id: INVOCATION_REFUSED for another request
// under the id (anotherRequest), or for the same request with a token the gate
// refuses now (see repeatRefusal); else rc, the first request's receipt. The
// same request with a token of another subject than the one rc names is
// another request (ofAnotherSubject). typ is "" while the first request has no receipt: it is
// told when that receipt is appended.
func (s *Service) repeatAnswer(ctx context.Context, first *projector.Invocation, rc *wire.Receipt, req *wire.InvocationRequest, client string) (typ string, data any) {
	if !sameRequest(first, req, client) || s.ofAnotherSubject(req, rc) {
		return wire.TypeInvocationRefused, s.anotherRequest(ctx, req)
	}
	// The same client, the same request: the first one's receipt is its own
	// only if the token it sends now would let it make the call.
	if r := s.repeatRefusal(ctx, req, false, rc); r != nil {
		return wire.TypeInvocationRefused, gateRefused(req, r)
	}
	if rc != nil {
		return wire.TypeReceipt, rc
	}
	return "", nil
}

// anotherRequest is the INVOCATION_REFUSED a bus client's request req under an
// invocation id whose first request it is not gets: the id was used for another
// request, or, when the token req carries could not make req, the gate's
// refusal, as the same request would get. Being told the id was used against a
// refusal for the same request would tell a token of the client that may not
// make the call which key and arguments the call had.
func (s *Service) anotherRequest(ctx context.Context, req *wire.InvocationRequest) wire.InvocationRefused {
	if r := s.repeatRefusal(ctx, req, false, nil); r != nil {
		return gateRefused(req, r)
	}
	return wire.InvocationRefused{InvocationID: req.InvocationID, Key: req.Key, Error: wire.InvocationIDReusedMessage(req.InvocationID)}
}

// ofAnotherSubject reports whether rc, the receipt of the first request under
// req's invocation id, is a call of another token subject than the token req
// carries: rc names a token's holder (token:<sub>), and req's token is not one
// of that subject, or not a token at all. A bus client's call under a chosen id
// is its token's subject's, as a call under an Idempotency-Key is and as
// GET /api/dispatch?receipt= reads it: a token of another subject sending the
// same request gets nothing of it, told the id was used as for another request
// (one right guess of the key and arguments would otherwise read the result).
func (s *Service) ofAnotherSubject(req *wire.InvocationRequest, rc *wire.Receipt) bool {
	if rc == nil || !strings.HasPrefix(rc.Actor, wire.TokenActor("")) {
		return false
	}
	claims, _ := s.gate.Caller(req.Token)
	return claims == nil || rc.Actor != wire.TokenActor(claims.Subject)
}

// gateRefused is the INVOCATION_REFUSED a bus client's repeat of req gets for
// the gate's refusal r of its token now.
func gateRefused(req *wire.InvocationRequest, r *gate.Refusal) wire.InvocationRefused {
	return wire.InvocationRefused{InvocationID: req.InvocationID, Key: req.Key, Status: r.Status, Error: r.Literal}
}

// notice tells the bus client client, on req's receipt notice subject, an event
// of type typ with data: not stored. A notice that does not go out loses nothing.
func (s *Service) notice(client string, req *wire.InvocationRequest, typ string, data any) {
	ev, err := s.noticeEvent(req, typ, data)
	if err == nil {
		err = s.cfg.Log.NotifyEvent(wire.ReceiptNoticeSubject(client, req.Key, req.InvocationID), ev)
	}
	if err != nil {
		s.cfg.Logger.Warn("dispatcher: notice not published", "invocation", req.InvocationID, "type", typ, "err", err)
	}
}

// noticeEvent is the event a bus client is told about req in: a receipt under
// its own event id, or a refusal. Never stored. A receipt is made under its id
// from the start: its envelope, written once, is what wire.Encode gives back.
func (s *Service) noticeEvent(req *wire.InvocationRequest, typ string, data any) (wire.Event, error) {
	if typ == wire.TypeReceipt {
		return wire.NewEventWithID(s.waiters.ids.of(req.InvocationID), s.cfg.Clock(), typ, s.engineActor, data)
	}
	return wire.NewEvent(s.cfg.Clock(), typ, s.engineActor, data)
}
