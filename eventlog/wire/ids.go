package wire

import (
	"crypto/rand"
	"encoding/binary"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// TracePrefix starts every trace id: "t_" and ten random base32 characters.
// Invocation ids are InvocationPrefix and a lower-case ULID.
const TracePrefix = "t_"

// NewInvocationID returns a fresh invocation id stamped at t.
func NewInvocationID(t time.Time) string {
	return InvocationPrefix + strings.ToLower(newULID(t).String())
}

// ulids mints the ULIDs of events and invocation ids: within a millisecond
// each is a random step (1 to 2^32) above the last, as ulid's default entropy
// makes them, from a ChaCha8 stream seeded by crypto/rand. The entropy is
// written into the id itself, which stays off the heap: ulid.New reads it
// through an io.Reader, which made every id an allocation.
var ulids struct {
	mu  sync.Mutex
	ms  uint64
	hi  uint16 // the entropy's first two bytes
	lo  uint64 // and its last eight
	rng *mrand.ChaCha8
}

// newULID is a fresh ULID stamped at t.
func newULID(t time.Time) ulid.ULID {
	ms := ulid.Timestamp(t)
	var id ulid.ULID
	if err := id.SetTime(ms); err != nil {
		panic(err) // a time past the year 10889, as ulid.MustNew
	}
	ulids.mu.Lock()
	if ulids.rng == nil {
		var seed [32]byte
		rand.Read(seed[:])
		ulids.rng = mrand.NewChaCha8(seed)
	}
	if ms == ulids.ms {
		lo := ulids.lo + ulids.rng.Uint64()>>32 + 1
		if lo < ulids.lo {
			ulids.hi++ // the carry; past 2^80 it wraps, where ulid would panic
		}
		ulids.lo = lo
	} else {
		ulids.ms, ulids.hi, ulids.lo = ms, uint16(ulids.rng.Uint64()), ulids.rng.Uint64()
	}
	binary.BigEndian.PutUint16(id[6:], ulids.hi)
	binary.BigEndian.PutUint64(id[8:], ulids.lo)
	ulids.mu.Unlock()
	return id
}

const traceAlphabet = "abcdefghijklmnopqrstuvwxyz234567"

// NewTrace returns a fresh trace id.
func NewTrace() string {
	var b [10]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = traceAlphabet[b[i]&31]
	}
	return TracePrefix + string(b[:])
}

// MaxKeyLen is the longest key a row may have.
const MaxKeyLen = 128

// ValidKey reports whether key matches ^[A-Za-z0-9_-]{1,128}$. Keys become NATS
// subject tokens, so they are restricted to characters that are safe there: no '.',
// no whitespace, no '*' or '>'. Every invocation checks its key, so this is a loop,
// not a regexp.
func ValidKey(key string) bool {
	if len(key) < 1 || len(key) > MaxKeyLen {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
