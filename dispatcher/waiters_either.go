package dispatcher

import "github.com/capdir/capdir/eventlog/wire"

// addEither registers one caller waiting on whichever of the invocations a and
// b gets a receipt, with one channel: it holds a receipt of each, so waking it
// under both never blocks. Remove it with remove(a, ch) and remove(b, ch)
// unless receipts woke it.
func (w *waiters) addEither(a, b string) chan wire.Receipt {
	ch := make(chan wire.Receipt, 2)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, inv := range [2]string{a, b} {
		wt := w.waiterLocked(inv)
		wt.chs = append(wt.chs, ch)
	}
	return ch
}
