package dispatcher

import (
	"context"
	"sync"

	"github.com/capdir/capdir/dispatcher/gate"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// waiters wakes callers blocked on an invocation once its receipt is in the log:
// a worker of this process hands over the receipt it appended (deliver); a receipt
// appended by another node's worker wakes its waiter when this node reads it.
// Several callers may wait on one invocation (the same Idempotency-Key sent
// again while the first call runs): the receipt wakes them all.
type waiters struct {
	ids receiptIDs
	mu  sync.Mutex
	m   map[string]*waiter // by invocation id
	ev  map[string]string  // receipt event id -> invocation id
	// read reads inv's receipt, whose event id is eventID, from the message of
	// the data stream at seq: ok is false when it cannot (waiters_local.go).
	// Nil: a receipt seen while claimed is not read again.
	read func(ctx context.Context, inv string, seq uint64, eventID string) (rc wire.Receipt, ok bool)
}

type waiter struct {
	chs     []chan wire.Receipt
	first   [1]chan wire.Receipt // chs' room for its first caller, mostly its only
	eventID string
	local   int    // workers of this process claiming it (waiters_local.go)
	seenAt  uint64 // the data-stream sequence its receipt was read at while claimed
	// final holds the callers that wait for the invocation's final receipt only
	// (an approved call's re-run, addFinal): a held call's pending receipt does
	// not wake them (wakePending).
	final map[chan wire.Receipt]bool
}

func newWaiters(ids receiptIDs) *waiters {
	return &waiters{ids: ids, m: map[string]*waiter{}, ev: map[string]string{}}
}

// add registers a caller waiting on inv; remove it with remove(inv, ch) unless a
// receipt woke it. A caller that had its receipt from ch, and will not read ch
// again, hands it back with recycle.
func (w *waiters) add(inv string) chan wire.Receipt {
	ch, _ := receiptChans.Get().(chan wire.Receipt)
	if ch == nil {
		ch = make(chan wire.Receipt, 1)
	}
	w.mu.Lock()
	wt := w.waiterLocked(inv)
	wt.chs = append(wt.chs, ch)
	w.mu.Unlock()
	return ch
}

// receiptChans are the channels of add's callers handed back by recycle.
var receiptChans sync.Pool

// recycle hands back ch, made by add, once its caller has had its receipt from
// it: the receipt's sender took ch from its waiter before sending (take), so
// no one sends on it again and it is empty. A caller whose wait ended otherwise
// (removed) keeps it: a sender that took it first may still send.
func (w *waiters) recycle(ch chan wire.Receipt) {
	if len(ch) == 0 && cap(ch) == 1 {
		receiptChans.Put(ch)
	}
}

// waiterLocked is inv's waiter, made when no one waits on inv yet.
func (w *waiters) waiterLocked(inv string) *waiter {
	wt, ok := w.m[inv]
	if !ok {
		wt = &waiter{eventID: w.ids.of(inv)}
		wt.chs = wt.first[:0]
		w.m[inv] = wt
		w.ev[wt.eventID] = inv
	}
	return wt
}

// remove unregisters the caller waiting on inv with ch; the others stay.
func (w *waiters) remove(inv string, ch chan wire.Receipt) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wt, ok := w.m[inv]
	if !ok {
		return
	}
	for i, c := range wt.chs {
		if c == ch {
			wt.chs = append(wt.chs[:i], wt.chs[i+1:]...)
			break
		}
	}
	delete(wt.final, ch)
	if len(wt.chs) == 0 {
		delete(w.m, inv)
		delete(w.ev, wt.eventID)
	}
}

// take removes and returns every caller waiting on inv, if any.
func (w *waiters) take(inv string) ([]chan wire.Receipt, bool) {
	w.mu.Lock()
	wt, ok := w.m[inv]
	if ok {
		delete(w.m, inv)
		delete(w.ev, wt.eventID)
	}
	w.mu.Unlock()
	if !ok {
		return nil, false
	}
	return wt.chs, true
}

// wake hands rc to every caller waiting on its invocation. Each channel holds one
// receipt and gets at most one, so this never blocks.
func (w *waiters) wake(inv string, rc *wire.Receipt) {
	chs, _ := w.take(inv)
	for _, ch := range chs {
		ch <- *rc
	}
}

// addFinal registers a caller waiting on inv for its final receipt: a held
// call's pending receipt (wakePending) leaves it waiting. Remove it as add's.
func (w *waiters) addFinal(inv string) chan wire.Receipt {
	ch := make(chan wire.Receipt, 1)
	w.mu.Lock()
	wt := w.waiterLocked(inv)
	wt.chs = append(wt.chs, ch)
	if wt.final == nil {
		wt.final = map[chan wire.Receipt]bool{}
	}
	wt.final[ch] = true
	w.mu.Unlock()
	return ch
}

// wakePending hands rc, the pending receipt of a call held for approval, to the
// callers waiting on its invocation, except those waiting for its final
// receipt (addFinal): the approved call's re-run, whose waiter a late pending
// receipt of the first run must not answer.
func (w *waiters) wakePending(inv string, rc *wire.Receipt) {
	w.mu.Lock()
	wt, ok := w.m[inv]
	if !ok {
		w.mu.Unlock()
		return
	}
	var woken, kept []chan wire.Receipt
	for _, ch := range wt.chs {
		if wt.final[ch] {
			kept = append(kept, ch)
		} else {
			woken = append(woken, ch)
		}
	}
	wt.chs = kept
	if len(kept) == 0 {
		delete(w.m, inv)
		delete(w.ev, wt.eventID)
	}
	w.mu.Unlock()
	for _, ch := range woken {
		ch <- *rc
	}
}

// byEvent is the invocation id whose receipt has event id id, if someone waits.
func (w *waiters) byEvent(id string) (string, bool) {
	w.mu.Lock()
	inv, ok := w.ev[id]
	w.mu.Unlock()
	return inv, ok
}

// deliver wakes rc's waiter with the receipt a worker of this process has just
// appended, without waiting for the projection to fold it.
func (w *waiters) deliver(rc *wire.Receipt) {
	w.wake(rc.InvocationID, rc)
}

// seen is the projector's OnSeen hook: it wakes the waiter of a receipt appended by
// another node's worker as soon as this node reads it, without waiting for the
// batch to commit. A waiter is found by the receipt's event id (receiptIDs), so
// receipts nobody waits for are not decoded; only a RECEIPT stored on a receipt
// subject, for the invocation it names, wakes anyone.
func (w *waiters) seen(stream string, s *eventlog.Stored) {
	if stream == wire.ControlStream && s.Type == wire.TypeApprovalRequested {
		w.seenApproval(s)
		return
	}
	if stream != wire.DataStream || s.Type != wire.TypeReceipt {
		return
	}
	inv, ok := w.byEvent(s.ID)
	if !ok || wire.ParseSubject(s.Subject).Family != wire.ReceiptFamily {
		return
	}
	w.mu.Lock()
	if wt, ok := w.m[inv]; ok && wt.local > 0 {
		// A worker of this process delivers it: where it was read is kept, in
		// case it does not (s.Data's bytes are the projector's, which it reads
		// its next packs into).
		wt.seenAt = s.Seq
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	w.wakeWith(inv, s.Data)
}

// seenApproval wakes the waiter of a call another node's worker held for the
// owner's approval, with the pending state (never stored as a receipt).
func (w *waiters) seenApproval(s *eventlog.Stored) {
	subj := wire.ParseSubject(s.Subject)
	if subj.Family != wire.ApprovalFamily {
		return
	}
	w.mu.Lock()
	_, ok := w.m[subj.Key]
	w.mu.Unlock()
	if !ok {
		return
	}
	var ar wire.ApprovalRequested
	if err := s.DataAs(&ar); err != nil || ar.InvocationID != subj.Key {
		return
	}
	p := gate.PendingApprovalRefusal()
	rc := wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: ar.InvocationID, Trace: ar.Trace, Actor: ar.Actor,
		Key: ar.Key, Status: p.Status, StartedAt: ar.RequestedAt}, Result: p.Literal}
	w.wakePending(subj.Key, &rc)
}
