package mcprunner

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sentMark records, on a call's context, whether any request of the call was
// handed to an HTTP upstream's transport (headerTransport marks it before the
// request leaves). A call whose mark is unset cannot have reached the upstream.
type sentMark struct{ sent atomic.Bool }

type sentKey struct{}

func withSentMark(ctx context.Context) (context.Context, *sentMark) {
	m := &sentMark{}
	return context.WithValue(ctx, sentKey{}, m), m
}

// markSent marks ctx's call as sent, when it carries a mark.
func markSent(ctx context.Context) {
	if m, ok := ctx.Value(sentKey{}).(*sentMark); ok {
		m.sent.Store(true)
	}
}

// again reports whether a call that failed with err on c may be made once more
// on a fresh session: its session was closing (the SDK refuses a call on a
// closing connection before writing it) and, as its mark shows, no request of
// it left for the upstream, so the tool cannot have run. A stdio upstream's
// writes are not tracked: its calls are never made again. The context must be
// live.
func again(ctx context.Context, c conn, m *sentMark, err error) bool {
	return ctx.Err() == nil && c.tracked && !m.sent.Load() && errors.Is(err, mcp.ErrConnectionClosed)
}

// callOnce runs do on a session for u, and once more on a fresh session when
// the first met a closing one before anything was sent (see again). It returns
// the session the result came from, released by the caller, and connected:
// whether a session was made (an error before it is always unreachable). A
// connection that failed is dropped, and so is one that gave no answer within
// the runner's timeout or the caller's deadline (a wedged upstream); one whose
// caller gave up (caller's context cancelled) is kept. A deadline is not a
// giving up: a step of a flow runs under what is left of its parent's budget,
// which can end before the runner's own timeout on every call, and a wedged
// session kept for that would take every later call.
func (r *Runner) callOnce(caller, ctx context.Context, u Upstream, do func(context.Context, conn) error) (c conn, connected bool, err error) {
	for attempt := 0; ; attempt++ {
		if c, err = r.pool.get(ctx, u); err != nil {
			return c, false, err // c.redact only, when connecting failed
		}
		mctx, m := withSentMark(ctx)
		err = do(mctx, c)
		if err == nil || attempt > 0 || !again(ctx, c, m, err) {
			if err != nil && answered(err) == nil && !errors.Is(caller.Err(), context.Canceled) {
				r.pool.drop(u.Name, c.l) // the connection failed: the next call connects again
			}
			return c, true, err
		}
		r.pool.drop(u.Name, c.l)
		c.release()
	}
}
