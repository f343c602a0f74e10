package dispatcher

import (
	"context"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// awaitOwn waits on ch, registered under the id the call asked for and under
// the one scoped to its client, for the call's own receipt, and answers the
// call with it. Whose a receipt under the asked id is, the first request under
// it says: this client's, and it is the call's; another sender's (its request
// came first in the log), and the call runs under the scoped id, whose receipt
// is waited for on. So the responder never waits for the projection to fold
// what the log held before the call's request: the receipt is read once it
// comes, and only then its first request. req's id is the asked one, or the
// scoped one when the call is known to run there (callRepeat). rp is the call
// in calls.replying (nil for a chosen id): once a worker of this node has found
// the asked id the client's own, its receipt there is handed over without
// reading the first request. repeat says the call repeats an earlier request
// (a copy of one the log held already, or a request under a chosen id whose
// first still runs): the receipt it waited for is then a repeat's answer,
// handed over only if the token the call carries permits the call now (else
// the gate's refusal, as repeatAnswer gives).
func (s *Service) awaitOwn(ctx context.Context, c eventlog.Call, req *wire.InvocationRequest, client, asked string, ch chan wire.Receipt, rp *replyingCall, repeat bool) {
	scoped := wire.ScopedInvocationID(client, asked)
	for {
		rc, err := s.await(ctx, 0, req, ch, nil, nil)
		if err != nil {
			return // the caller sends it again under the same id for its receipt
		}
		if repeat && s.refuseRepeat(ctx, c, req, &rc) {
			return
		}
		switch {
		case rc.InvocationID == scoped:
			req.InvocationID = scoped
			s.replyReceipt(ctx, c, req, client, &rc)
			return
		case req.InvocationID == scoped:
			continue // the asked id's, once the call is known to run under the scoped one
		case rp != nil && rp.own.Load():
			s.replyOwn(c, req, client, &rc, nil)
			return
		}
		first, err := s.firstCaller(ctx, asked)
		if err == nil && first.Seq != 0 && first.Client != client {
			// Another sender's call under the id: this one runs under the id
			// scoped to its client, and nothing of the other's reaches it.
			req.InvocationID = scoped
			continue
		}
		s.replyOwn(c, req, client, &rc, err)
		return
	}
}
