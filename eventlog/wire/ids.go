package wire

import (
	"crypto/rand"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
)

// TracePrefix starts every trace id: "t_" and ten random base32 characters.
// Invocation ids are InvocationPrefix and a lower-case ULID.
const TracePrefix = "t_"

// NewInvocationID returns a fresh invocation id stamped at t.
func NewInvocationID(t time.Time) string {
	return InvocationPrefix + strings.ToLower(ulid.MustNew(ulid.Timestamp(t), ulid.DefaultEntropy()).String())
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
