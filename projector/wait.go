package projector

import "context"

// WaitContext is ctx bounded by the projection wait (Settings.Wait): what a
// reader gives Settle, SettleKey or WaitFor when it will read what the
// projection has once the wait is over, caught up or not.
func (p *Projector) WaitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, p.cfg.Wait)
}
