package mcp

import (
	"context"
	"errors"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/projector"
)

// Run keeps every session's tools in step with the directory until ctx ends,
// then closes the handler (Close) and returns nil. Each committed directory change
// is read once and applied to every session in tools mode: a row that appears,
// changes or leaves what a session is offered is added, replaced or removed on its
// server, and the SDK sends that session notifications/tools/list_changed. A token
// holder's session whose token no longer holds (revoked) is closed. Sessions opened
// before Run starts are brought up to date when it does. Run may be called once.
func (h *Handler) Run(ctx context.Context) error {
	h.watch.Do(func() { h.cfg.Projector.WatchDirectory(h.changed) })
	for {
		select {
		case <-ctx.Done():
			h.Close()
			return nil
		case <-h.kick:
			h.refresh()
		}
	}
}

// changed is the projector's directory watcher: it runs on the projector's
// goroutine, so it only records the key and wakes Run.
func (h *Handler) changed(key string, _ bool) {
	h.pendMu.Lock()
	h.pending[key] = struct{}{}
	h.pendMu.Unlock()
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// takePending returns the keys changed since the last call.
func (h *Handler) takePending() []string {
	h.pendMu.Lock()
	defer h.pendMu.Unlock()
	keys := make([]string, 0, len(h.pending))
	for k := range h.pending {
		keys = append(keys, k)
	}
	clear(h.pending)
	return keys
}

// refresh applies the pending keys' rows, as they are now, to every session. It
// holds h.mu, as open does, so a session never misses a change nor applies an
// older row over a newer one.
func (h *Handler) refresh() {
	keys := h.takePending()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.sessions) == 0 || h.closed {
		return
	}
	rows := make(map[string]*contract.Row, len(keys))
	for _, k := range keys {
		row, _, err := h.cfg.Projector.Row(k)
		switch {
		case errors.Is(err, projector.ErrNotFound):
			rows[k] = nil
		case err != nil:
			h.cfg.Logger.Warn("mcp: a changed row could not be read; sessions keep their tool for it", "key", k, "error", err)
		default:
			rows[k] = &row
		}
	}
	for _, s := range h.sessions {
		if s.caller.token != "" {
			if _, refused := h.cfg.Dispatcher.Caller(s.caller.token); refused != nil {
				// Revoked: its requests are refused, and so are its announcements. The
				// session answers its calls in flight before it closes: not under h.mu.
				h.wg.Add(1)
				go func() {
					defer h.wg.Done()
					s.close()
				}()
				continue
			}
		}
		if !s.loaded.Load() {
			continue // its first read of the directory will see these rows
		}
		for k, row := range rows {
			s.apply(k, row)
		}
	}
}
