package projector

import (
	"sync"

	"github.com/capdir/capdir/contract"
)

// rowCacheMax bounds the decoded rows the gate keeps (a few MB at most).
const rowCacheMax = 4096

// rowCache keeps decoded rows for the dispatcher's gate, with the contract
// fingerprint computed once per row version, so a call neither opens a
// transaction nor decodes its row's JSON.
//
// A fill may race a directory commit: gen counts committed directory changes, and
// a row read under an older gen is not stored. Invalidation runs after the commit
// and before the stream's applied sequence moves, so a reader that waited for a
// directory write (WaitFor) never gets the version before it.
type rowCache struct {
	mu  sync.Mutex
	gen uint64
	m   map[string]*cachedRow
}

// cachedRow is a decoded row as the gate reads it.
type cachedRow struct {
	Row contract.Row
	// Fingerprint is contract.Fingerprint(&Row); Seq is the control-stream
	// sequence of the mutation that wrote Row.
	Fingerprint string
	Seq         uint64
	// Signature is Row's input_schema compiled with its argument mapping
	// (contract.CompileSignature), nil for a row without one; SignatureErr is
	// why it did not compile. Compiled once per row version: the cache drops it
	// with the row.
	Signature    *contract.Signature
	SignatureErr error
}

// newCachedRow decodes what the gate needs of row once: its fingerprint and its
// compiled signature.
func newCachedRow(row contract.Row) *cachedRow {
	gr := &cachedRow{Row: row, Fingerprint: contract.Fingerprint(&row)}
	gr.Signature, gr.SignatureErr = contract.CompileSignature(&row)
	return gr
}

func newRowCache() *rowCache { return &rowCache{m: make(map[string]*cachedRow)} }

func (c *rowCache) get(key string) (*cachedRow, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[key], c.gen
}

// put stores r unless a directory change committed since gen was read.
func (c *rowCache) put(key string, r *cachedRow, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if len(c.m) >= rowCacheMax {
		for k := range c.m { // evict one arbitrary row
			delete(c.m, k)
			break
		}
	}
	c.m[key] = r
}

// invalidate drops the changed keys after their commit.
func (c *rowCache) invalidate(changes []dirChange) {
	if len(changes) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for _, ch := range changes {
		delete(c.m, ch.key)
	}
}
