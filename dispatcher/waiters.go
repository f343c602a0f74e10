package dispatcher

import (
	"sync"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// waiters wakes callers blocked on an invocation once its receipt is in the log:
// a worker of this process hands over the receipt it appended (deliver); a receipt
// appended by another node's worker wakes its waiter when this node reads it.
type waiters struct {
	mu sync.Mutex
	m  map[string]chan eventlog.Receipt
}

func newWaiters() *waiters { return &waiters{m: map[string]chan eventlog.Receipt{}} }

func (w *waiters) add(inv string) chan eventlog.Receipt {
	ch := make(chan eventlog.Receipt, 1)
	w.mu.Lock()
	w.m[inv] = ch
	w.mu.Unlock()
	return ch
}

func (w *waiters) remove(inv string) {
	w.mu.Lock()
	delete(w.m, inv)
	w.mu.Unlock()
}

// take removes and returns inv's waiter, if any.
func (w *waiters) take(inv string) (chan eventlog.Receipt, bool) {
	w.mu.Lock()
	ch, ok := w.m[inv]
	if ok {
		delete(w.m, inv)
	}
	w.mu.Unlock()
	return ch, ok
}

// deliver wakes rc's waiter with the receipt a worker of this process has just
// appended, without waiting for the projection to fold it.
func (w *waiters) deliver(rc *eventlog.Receipt) {
	if ch, ok := w.take(rc.InvocationID); ok {
		ch <- *rc
	}
}

// seen is the projector's OnSeen hook: it wakes the waiter of a receipt appended by
// another node's worker as soon as this node reads it, without waiting for the
// batch to commit. The invocation id comes from the receipt's event id (see
// receiptEventID; Invoke mints the inv_ ids it is derived from), so receipts nobody
// waits for are not decoded.
func (w *waiters) seen(stream string, s *eventlog.Stored) {
	if stream != eventlog.DataStream || s.Type != eventlog.TypeReceipt || !wire.IsReceiptSubject(s.Subject) {
		return
	}
	ch, ok := w.take(receiptInvocationID(s.ID))
	if !ok {
		return
	}
	var rc eventlog.Receipt
	if err := s.DataAs(&rc); err == nil {
		ch <- rc
	}
}
