package projector

import (
	"sync"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	bolt "go.etcd.io/bbolt"
)

// Token revocations. A TOKEN_REVOKED event on the control stream is folded into
// the revoked bucket (token id -> the revocation's exp, Unix seconds; the later
// exp when a token is revoked twice), which the digest covers like every other
// bucket, so a replay gives back the same revocations. The gate asks Revoked for
// every token request: it answers from a set in memory, loaded when the projection
// opens and updated after every commit that revokes a token. A revocation whose
// exp (plus revokedLeeway, as much as any verifier tolerates) has passed is
// dropped from memory: the token is refused as expired by then. The bucket keeps
// it, so the fold does not depend on when it runs.

// tokenRevoked folds a TOKEN_REVOKED event. The fold checks only its structure:
// decodable, a token id that is one subject token, on that token's own subject.
func (f *folder) tokenRevoked(s *eventlog.Stored, subj wire.Subject) error {
	var r wire.TokenRevoked
	if err := decodeData(s, &r); err != nil {
		return err
	}
	if !wire.ValidTokenID(r.JTI) {
		return skipf(reasonBadData, "token revocation: bad token id %q", clip(r.JTI))
	}
	if err := sameKey("jti", r.JTI, subj.Key); err != nil {
		return err
	}
	if r.Exp <= 0 {
		return skipf(reasonBadData, "token revocation of %s: exp %d", r.JTI, r.Exp)
	}
	old, err := get(f.tx, bucketRevoked, []byte(r.JTI))
	if err != nil {
		return err
	}
	if readU64(old) >= uint64(r.Exp) {
		return nil
	}
	if err := put(f.tx, bucketRevoked, []byte(r.JTI), u64(uint64(r.Exp))); err != nil {
		return err
	}
	f.fx.revoked = append(f.fx.revoked, r)
	return nil
}

// Revoked reports whether a TOKEN_REVOKED event for the token id jti has been
// folded (and its token may not have expired yet). It reads memory only, so the
// gate may ask it on every request. A caller that must see a revocation appended
// through another node waits for the control stream first (WaitFor).
func (p *Projector) Revoked(jti string) bool { return p.revoked.has(jti) }

// revokedSet is the in-memory copy of the revoked bucket, without what has expired.
type revokedSet struct {
	clock func() time.Time
	mu    sync.RWMutex
	exp   map[string]int64 // token id -> exp, Unix seconds
}

func newRevokedSet(clock func() time.Time) *revokedSet {
	return &revokedSet{clock: clock, exp: map[string]int64{}}
}

func (r *revokedSet) has(jti string) bool {
	r.mu.RLock()
	_, ok := r.exp[jti]
	r.mu.RUnlock()
	return ok
}

// load reads the bucket, skipping what has expired.
func (r *revokedSet) load(tx *bolt.Tx) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	horizon := r.horizon()
	return each(tx, bucketRevoked, func(k, v []byte) error {
		if exp := int64(readU64(v)); exp > horizon {
			r.exp[string(k)] = exp
		}
		return nil
	})
}

// add records committed revocations and drops the ones that have expired.
func (r *revokedSet) add(revoked []wire.TokenRevoked) {
	if len(revoked) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range revoked {
		r.exp[t.JTI] = max(r.exp[t.JTI], t.Exp)
	}
	horizon := r.horizon()
	for jti, exp := range r.exp {
		if exp <= horizon {
			delete(r.exp, jti)
		}
	}
}

// horizon is the exp at or before which a token has expired for every verifier.
func (r *revokedSet) horizon() int64 { return r.clock().Add(-revokedLeeway).Unix() }

// revokedLeeway is how long past its exp a revocation is still held in memory: the
// most clock skew a token verifier may tolerate (token.MaxLeeway; a test checks).
const revokedLeeway = time.Minute
