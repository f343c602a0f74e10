package projector

import (
	"encoding/json"
	"fmt"

	"github.com/capdir/capdir/contract"
	bolt "go.etcd.io/bbolt"
)

// WatchRows calls fn once for every live row now, read in one transaction, then
// after every committed directory change with the row as it was committed (nil when
// the key was deleted), so a watcher that keeps something derived from whole rows
// never reads bbolt again. It may be called at any time, also while Run is folding.
//
// fn runs on the goroutine that folds the control stream, after the commit and
// before readers waiting for it (WaitFor) are woken: a reader that waited for a
// write sees fn's effect. fn must not block for long and must not modify or keep the
// row it is given (other watchers get the same one); a row's RowNum is 0. A change
// committed while WatchRows reads its snapshot may reach fn twice, in the snapshot
// and as a change: applying a row again must be harmless.
func (p *Projector) WatchRows(fn func(key string, row *contract.Row)) error {
	p.hooksMu.Lock()
	defer p.hooksMu.Unlock()
	err := p.view(func(tx *bolt.Tx) error {
		return each(tx, bucketRows, func(k, v []byte) error {
			var row contract.Row
			if err := json.Unmarshal(v, &row); err != nil {
				return fmt.Errorf("row %s: %w", k, err)
			}
			fn(string(k), &row)
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("projector: watch rows: %w", err)
	}
	p.rowWatchers = append(p.rowWatchers, fn)
	return nil
}
