package wire

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
)

// A call is a bus client's invocation as one NATS request-reply: the client sends
// the INVOCATION_REQUESTED event it would publish on its request subject to its
// call subject instead, and one capdir node (a queue group of every node's
// responder) appends that same event to the client's request subject, waits for
// the receipt and replies with it. Nothing about the request changes: the worker
// takes it from the log, runs the same gate and writes the same receipt as for a
// published request; only the trips to get the answer are fewer (no
// acknowledgement to the client, no notice subscription, no notice).

// CallSubject is where the bus client named client sends its calls of one row:
// capdir.call.<CLIENT>.<KEY>. It is outside the streams (nothing sent there is
// stored as sent); the client's permissions allow it its own calls only
// (ClientCalls), so the subject says who calls, as its request subject does.
func CallSubject(client, key string) string { return callPrefix + client + "." + key }

// ClientCalls matches every call of one bus client: what its permissions let it
// send requests to.
func ClientCalls(client string) string { return callPrefix + client + ".>" }

// CallSubjects matches every bus client's calls: what capdir's responders serve.
const CallSubjects = callPrefix + ">"

// ParseCallSubject splits a call subject into its client and key; ok is false for
// a subject that is not CallSubject of a valid client name and key.
func ParseCallSubject(subject string) (client, key string, ok bool) {
	rest, ok := strings.CutPrefix(subject, callPrefix)
	if !ok {
		return "", "", false
	}
	client, key, ok = strings.Cut(rest, ".")
	if !ok || !ValidClientName(client) || !ValidKey(key) {
		return "", "", false
	}
	return client, key, true
}

// TypeCallRefused is the type of capdir's reply to a call it could not take: a
// request that is not one (not an INVOCATION_REQUESTED event, undecodable, a key
// that is not the subject's, a malformed invocation id), one too large for the
// log, or one the log did not store. Nothing of it is in the log and nothing
// ran; it is never stored.
const TypeCallRefused = "CALL_REFUSED"

// CallRefused is the data of a CALL_REFUSED reply. Error is capdir's literal
// reason; Retry says that the request itself was fine and capdir could not take
// it now (the log did not store it, the node was answering as many calls as it
// takes): send the same request again (with the same invocation id), as
// HowToFix, when given, says.
type CallRefused struct {
	InvocationID string `json:"invocation_id,omitempty"`
	Key          string `json:"key"`
	Error        string `json:"error"`
	Retry        bool   `json:"retry,omitempty"`
	HowToFix     string `json:"how_to_fix,omitempty"`
}

// Call is a bus client's whole invocation as one request-reply (see CallSubject):
// the request goes to the client's call subject, and the reply is its receipt,
// once the receipt is in the log. The options, the client name and the
// connection are Invoke's; the receipt, the idempotency of WithInvocationID and
// the errors for a repeated id (ErrInvocationIDReused, ErrRepeatRefused) too. A
// request capdir cannot take is answered at once with an error matching
// ErrCallRefused (nothing is in the log); with no capdir node answering, an
// error matching ErrNoCapdir.
//
// When ctx ends before the reply, Call returns ctx's error with the invocation
// id in a partial receipt: the call may still run. Sending it again with
// WithInvocationID(that id) runs it at most once and replies with its receipt
// (choose the id with NewInvocationID before the first send to make every
// retry safe).
func Call(ctx context.Context, nc *nats.Conn, client, key, body string, opts ...InvokeOption) (Receipt, error) {
	_, ev, req, err := invokeRequest(client, key, body, opts)
	if err != nil {
		return Receipt{}, err
	}
	if err := checkInbox(nc, client); err != nil {
		return Receipt{}, err
	}
	data, err := Encode(&ev)
	if err != nil {
		return Receipt{}, err
	}
	subject := CallSubject(client, req.Key)
	m, err := nc.RequestWithContext(ctx, subject, data)
	if err != nil {
		return partialReceipt(&req), callError(nc, client, subject, &req, err)
	}
	return answerOf(m.Data, &req)
}

// callError says why a call got no reply.
func callError(nc *nats.Conn, client, subject string, req *InvocationRequest, err error) error {
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return fmt.Errorf("%w on %s: is capdir serve running, and does its server admit this client (capdir bus list)?", ErrNoCapdir, subject)
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(err, nats.ErrTimeout):
		if refused := publishError(nc, client, subject, err); errors.Is(refused, ErrRefused) {
			return refused
		}
		return fmt.Errorf("wait for receipt of %s: %w (it may still run: send it again with WithInvocationID(%q) to get its receipt)", req.InvocationID, err, req.InvocationID)
	}
	return fmt.Errorf("call %s: %w", subject, err)
}

func partialReceipt(req *InvocationRequest) Receipt {
	return Receipt{ReceiptSummary: ReceiptSummary{InvocationID: req.InvocationID, Trace: req.Trace, Key: req.Key}}
}

// answerOf reads capdir's answer to req, a receipt notice or a call's reply: the
// receipt, or the refusal as an error.
func answerOf(data []byte, req *InvocationRequest) (Receipt, error) {
	var rc Receipt
	got, err := DecodeShared(data) // the answer is this call's alone
	if err != nil {
		return rc, err
	}
	switch got.Type {
	case TypeCallRefused:
		var r CallRefused
		if err := got.DataAs(&r); err != nil {
			return rc, err
		}
		if r.Retry {
			return partialReceipt(req), fmt.Errorf("%w: %w: %s", ErrCallRefused, ErrCallRetry, callRefusal(&r))
		}
		return partialReceipt(req), fmt.Errorf("%w: %s", ErrCallRefused, callRefusal(&r))
	case TypeInvocationRefused:
		var r InvocationRefused
		if err := got.DataAs(&r); err != nil {
			return rc, err
		}
		rc.InvocationID, rc.Key = req.InvocationID, req.Key
		if r.Status != "" {
			rc.Status, rc.Result = r.Status, r.Error
			return rc, fmt.Errorf("%w: %s", ErrRepeatRefused, r.Error)
		}
		return rc, fmt.Errorf("%w: %s", ErrInvocationIDReused, r.Error)
	}
	err = got.DataAs(&rc)
	return rc, err
}

// callRefusal is a CALL_REFUSED reply's reason, and what to do about it when
// capdir says.
func callRefusal(r *CallRefused) string {
	if r.HowToFix == "" {
		return r.Error
	}
	return r.Error + " (" + r.HowToFix + ")"
}
