package dispatcher

import (
	"context"
	"encoding/json"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
)

// A worker of this process that stores a receipt hands it over to the callers
// waiting for it (deliver) once its append is acknowledged. Meanwhile the
// projector may read the same receipt from the log (seen): decoding it there too
// would be waste. A worker claims its invocation's waiter before the append;
// while it holds the claim, seen keeps only where the receipt was read (its
// message's sequence), and only a claim given up without a delivery (the
// append failed, the worker stopped) reads the receipt from the log there and
// wakes the callers with it.

// claim marks inv's waiter, if anyone waits, as one a worker of this process is
// to deliver to; nil when no one waits. Give it up with unclaim unless deliver
// woke the waiter.
func (w *waiters) claim(inv string) *waiter {
	w.mu.Lock()
	defer w.mu.Unlock()
	wt, ok := w.m[inv]
	if !ok {
		return nil
	}
	wt.local++
	return wt
}

// unclaim gives up a claim of inv's waiter wt (nil: none) that ended without a
// delivery: when no other worker claims it, a receipt seen meanwhile wakes it
// now, read again within ctx.
func (w *waiters) unclaim(ctx context.Context, inv string, wt *waiter) {
	if wt == nil {
		return
	}
	w.mu.Lock()
	if w.m[inv] != wt { // woken, or given up by its callers
		w.mu.Unlock()
		return
	}
	wt.local--
	seq := wt.seenAt
	if wt.local > 0 || seq == 0 || w.read == nil {
		w.mu.Unlock()
		return
	}
	wt.seenAt = 0
	w.mu.Unlock()
	if rc, ok := w.read(ctx, inv, seq, wt.eventID); ok {
		w.wake(inv, &rc)
	}
}

// wakeWith decodes data, a receipt read from the log for inv, and wakes inv's
// callers with it.
func (w *waiters) wakeWith(inv string, data json.RawMessage) {
	ev := wire.Event{Type: wire.TypeReceipt, Data: data}
	var rc wire.Receipt
	if err := ev.DataAs(&rc); err != nil || rc.InvocationID != inv {
		return
	}
	w.wake(inv, &rc)
}

// eventID is the event id of inv's receipt: its waiter's, when someone waits,
// else derived again.
func (w *waiters) eventID(inv string) string {
	w.mu.Lock()
	wt, ok := w.m[inv]
	w.mu.Unlock()
	if ok {
		return wt.eventID
	}
	return w.ids.of(inv)
}

// receiptReadWait bounds readReceiptAt's read of the log.
const receiptReadWait = 5 * time.Second

// readReceiptAt is the waiters' read: inv's receipt, stored under eventID in
// the data stream's message at seq (one of a pack's events, or the message's
// own), read from the log; when the log cannot be read (the trouble that failed
// the worker's append may last), the one the projection holds once it has
// folded what its projector read (which includes it).
func (s *Service) readReceiptAt(ctx context.Context, inv string, seq uint64, eventID string) (wire.Receipt, bool) {
	ctx, cancel := context.WithTimeout(ctx, receiptReadWait)
	defer cancel()
	evs, err := s.cfg.Log.ReadEvents(ctx, wire.DataStream, seq)
	if err != nil {
		s.cfg.Logger.Warn("dispatcher: a receipt read from the log while its worker held it could not be read again; waiting for the projection", "seq", seq, "err", err)
		return s.receiptRead(ctx, inv)
	}
	for i := range evs {
		if evs[i].Invalid != "" || evs[i].ID != eventID || evs[i].Type != wire.TypeReceipt {
			continue
		}
		var rc wire.Receipt
		if evs[i].DataAs(&rc) == nil && rc.InvocationID == inv {
			return rc, true
		}
	}
	return wire.Receipt{}, false
}
