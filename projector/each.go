package projector

import (
	"encoding/json"
	"fmt"

	"github.com/capdir/capdir/contract"
	bolt "go.etcd.io/bbolt"
)

// Each calls fn with every row f matches, in canonical order, each with its
// row_num, and stops at fn's first error, which it returns. fn runs inside a read
// transaction of the projection: it must not block, and the row it is given is
// valid only until it returns.
func (p *Projector) Each(f Filter, fn func(*contract.Row) error) error {
	keys := p.index.keys()
	err := p.view(func(tx *bolt.Tx) error {
		var r contract.Row
		for i, k := range keys {
			v, err := get(tx, bucketRows, []byte(k))
			if err != nil {
				return err
			}
			if v == nil {
				continue
			}
			r = contract.Row{}
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("row %s: %w", k, err)
			}
			if !f.match(&r) {
				continue
			}
			r.RowNum = i + 1
			if err := fn(&r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("projector: rows: %w", err)
	}
	return nil
}
