package wire

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
)

// A caller may choose the invocation id of its request, so that sending the
// request again (after a lost answer, a timeout, a restart) runs the call once and
// answers every copy with the same receipt: a bus client with WithInvocationID,
// an HTTP caller with an Idempotency-Key header (from which capdir derives the id).
// A request whose invocation id is not RequestInvocationID of its event id carries
// a chosen id (Chosen); the worker then looks for an earlier request under the
// same id before it runs anything.

// MaxChosenIDLen bounds the characters after InvocationPrefix in a chosen
// invocation id.
const MaxChosenIDLen = 64

// ValidInvocationID reports whether id can be a chosen invocation id:
// InvocationPrefix and 1 to MaxChosenIDLen characters from A-Z a-z 0-9 _ -. The id
// is a token of the receipt notice subject, so it holds no '.', no wildcard and no
// whitespace.
func ValidInvocationID(id string) bool {
	rest, ok := strings.CutPrefix(id, InvocationPrefix)
	return ok && len(rest) <= MaxChosenIDLen && ValidKey(rest)
}

// CheckInvocationID returns nil for a valid chosen invocation id, else an error
// matching ErrBadInvocationID that says what an id may hold.
func CheckInvocationID(id string) error {
	if ValidInvocationID(id) {
		return nil
	}
	return fmt.Errorf("%w: %q must be %q and 1 to %d characters from A-Z, a-z, 0-9, '_' and '-' (NewInvocationID makes one)",
		ErrBadInvocationID, clipID(id), InvocationPrefix, MaxChosenIDLen)
}

func clipID(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// Chosen reports whether a request stored under eventID carries an invocation id
// its caller chose: one that is not derived from the event id (PrepareRequest
// derives it when the caller left it empty).
// It allocates nothing: every request a worker takes asks it.
func Chosen(invocationID, eventID string) bool {
	if invocationID == "" {
		return false
	}
	rest, ok := strings.CutPrefix(invocationID, InvocationPrefix)
	if !ok || len(rest) != len(eventID) {
		return true
	}
	for i := 0; i < len(rest); i++ {
		c := eventID[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c >= 0x80 {
			return invocationID != RequestInvocationID(eventID) // beyond ASCII: as derived
		}
		if rest[i] != c {
			return true
		}
	}
	return false
}

// RequestDigest is what makes two requests under one chosen invocation id the
// same request: SHA-256 over the key, the body, the arguments object and the
// shape flag, each length-prefixed. The credential and token are not part of it:
// the id is already the caller's.
func RequestDigest(key, body string, args json.RawMessage, shape bool) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	for _, part := range [][]byte{[]byte(key), []byte(body), args} {
		if string(part) == "null" {
			part = nil // JSON null counts as no arguments
		}
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	if shape {
		h.Write([]byte{1})
	} else {
		h.Write([]byte{0})
	}
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

// Digest is RequestDigest of r.
func (r *InvocationRequest) Digest() [sha256.Size]byte {
	return RequestDigest(r.Key, r.Body, r.Args, r.Shape)
}

// TypeInvocationRefused is the type of the notice a bus client gets instead of a
// receipt when it sent a request under an invocation id it had already used for
// another request (another key, body, arguments or shape). It is never stored.
const TypeInvocationRefused = "INVOCATION_REFUSED"

// InvocationRefused is the data of an INVOCATION_REFUSED notice. Status is empty
// for an invocation id reused for another request that the token it carries
// could make. For the same request sent again, or another one its token could
// not make, it is the receipt status of the gate's refusal of the token it carries
// now (StatusRefusedScope, …), and Error that refusal's literal (scope:<KEY>,
// token:revoked, …): the first request's receipt is not the client's with it.
type InvocationRefused struct {
	InvocationID string `json:"invocation_id"`
	Key          string `json:"key"`
	Status       string `json:"status,omitempty"`
	Error        string `json:"error"`
}

// InvocationIDReusedMessage is the refusal of a request under an invocation id
// its caller already used for another request.
func InvocationIDReusedMessage(id string) string {
	return "invocation id " + id + " was already used for another request (another key, body, arguments or shape): " +
		"send the same request again to get its receipt, or choose a new id for a new call"
}
