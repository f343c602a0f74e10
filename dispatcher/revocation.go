package dispatcher

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/capdir/capdir/dispatcher/gate"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// A token revocation is a TOKEN_REVOKED event on the control stream, and the gate
// reads it from this node's projection. A request carries the control-stream
// position its entry node had folded (DirSeq), and handle waits for it, so a
// revocation that node had folded is seen here. A revocation appended through
// another node may not have reached the entry node's projection yet; when other
// processes may append to the log, the worker asks the log where its last
// revocation is (one lookup, shared by the workers) and waits until its
// projection has folded that far. On a log no other node writes (the embedded
// server, listening for bus clients or not, with no node identity), every
// revocation went through this process's projection before the request was
// appended, and nothing is asked.

// sharedLog reports whether processes other than this one may append to l's
// control stream: an external cluster, or an embedded server that admitted
// another node (eventlog.Log.OtherNodes). Bus clients cannot.
func sharedLog(l *eventlog.Log) bool { return l.OtherNodes() }

// revocationWait bounds the lookup and the wait for the projection: longer than
// a cluster takes to elect the stream's new leader when a server goes away (4 to
// 9 s measured), so that an election does not refuse the token calls made
// during it. The worker keeps its request in progress meanwhile.
const revocationWait = 15 * time.Second

// catchUpRevocation brings the projection up to the log's last token revocation
// when the request carries a token. A token that does not authenticate is left to
// the gate to refuse. Should the lookup or the wait fail, in.RevokedErr makes the
// gate refuse the token rather than admit it unchecked.
//
// The lookup asks for the last event on any token's subject, not this token's, so
// that one lookup serves every request that arrived before it started: the
// workers share them through s.revocations (see revocationFence). A revocation
// acknowledged before the request was appended is at or below the sequence any
// lookup started after the request's delivery returns.
func (s *Service) catchUpRevocation(ctx context.Context, in *gate.Input) {
	if !s.sharedLog || in.Owner || in.Req.Token == "" {
		return
	}
	c, err := s.cfg.Tokens.Authenticate(in.Req.Token, s.cfg.Clock())
	if err != nil || !wire.ValidTokenID(c.ID) {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, revocationWait)
	defer cancel()
	seq, err := s.revocations.last(lctx, func(ctx context.Context) (uint64, error) {
		return s.cfg.Log.LastSubjectSeq(ctx, wire.ControlStream, wire.TokenSubjects)
	})
	if err != nil {
		in.RevokedErr = err
		return
	}
	if seq > s.cfg.Projector.Applied(wire.ControlStream) {
		if err := s.cfg.Projector.WaitFor(lctx, wire.ControlStream, seq); err != nil {
			in.RevokedErr = fmt.Errorf("the log's last token revocation is at sequence %d of %s, not yet folded here: %w", seq, wire.ControlStream, err)
		}
	}
}

// revocationFence shares the lookups of the log's last revocation between the
// workers. A caller may only use a lookup that started after it called, so that
// the answer covers everything appended before its request: a caller that finds
// a lookup running waits for the next one, which starts when the running one
// ends and serves everyone who arrived meanwhile. Under load that is one lookup
// at a time, whatever the number of workers. The lookups run on their own
// goroutine with their own deadline (revocationWait), so a caller that gives up
// strands nobody.
type revocationFence struct {
	mu      sync.Mutex
	running *fenceLookup // started; its answer is for callers that came before it
	next    *fenceLookup // not started; it will serve every caller waiting on it
}

type fenceLookup struct {
	done chan struct{}
	seq  uint64
	err  error
}

// last returns the answer of a lookup that started after this call.
func (f *revocationFence) last(ctx context.Context, lookup func(context.Context) (uint64, error)) (uint64, error) {
	f.mu.Lock()
	var l *fenceLookup
	if f.running == nil {
		l = &fenceLookup{done: make(chan struct{})}
		f.running = l
		go f.run(l, lookup)
	} else {
		if f.next == nil {
			f.next = &fenceLookup{done: make(chan struct{})}
		}
		l = f.next
	}
	f.mu.Unlock()
	select {
	case <-l.done:
		return l.seq, l.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// run makes lookup l, publishes its answer, then makes the next one while
// callers wait for it.
func (f *revocationFence) run(l *fenceLookup, lookup func(context.Context) (uint64, error)) {
	for l != nil {
		ctx, cancel := context.WithTimeout(context.Background(), revocationWait)
		l.seq, l.err = lookup(ctx)
		cancel()
		close(l.done)
		f.mu.Lock()
		l, f.next = f.next, nil
		f.running = l
		f.mu.Unlock()
	}
}

// Caller checks who the caller presenting raw is, as the gate will: see
// gate.Gate.Caller. An entry point refuses a token that does not hold before it
// appends anything.
func (s *Service) Caller(raw string) (*token.Claims, *gate.Refusal) { return s.gate.Caller(raw) }
