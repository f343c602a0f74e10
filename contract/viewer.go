package contract

import (
	"slices"

	"github.com/capdir/capdir/api/answer"
)

// Risk levels of a row, as the fingerprint, documents and the registry name them
// (Row.Risk).
const (
	RiskLow  = answer.RiskLow
	RiskHigh = answer.RiskHigh
)

// Role is what kind of credential a reader presented.
type Role int

const (
	// RoleAnonymous presented no credential.
	RoleAnonymous Role = iota
	// RoleOwner presented the owner key.
	RoleOwner
	// RoleToken presented a capability token; Viewer carries its claims.
	RoleToken
)

// Viewer is who reads a document or the registry: the credential's role and, for a
// token holder, what its claims permit. It is an abstraction of the credential, so
// contract needs no token code: the facade fills it from what the request proved.
// The zero value is the anonymous reader.
type Viewer struct {
	Role Role
	// Keys and Categories are a token's scope: the rows it may invoke, by key or by
	// category. The empty category is never in scope.
	Keys       []string
	Categories []string
	// Risk is a token's ceiling, RiskLow or RiskHigh.
	Risk string
}

// Owner is the owner's viewer.
func Owner() Viewer { return Viewer{Role: RoleOwner} }

// InScope reports whether the viewer's credential covers r: always for the owner,
// by key or category for a token holder, never for the anonymous reader.
func (v Viewer) InScope(r *Row) bool {
	switch v.Role {
	case RoleOwner:
		return true
	case RoleToken:
		return slices.Contains(v.Keys, r.Key) || r.Category != "" && slices.Contains(v.Categories, r.Category)
	}
	return false
}

// Discovers reports whether the viewer may find r in the registry and read its
// document: r is enabled and in the viewer's scope. A disabled row is found by
// nobody, as if it did not exist.
func (v Viewer) Discovers(r *Row) bool {
	return r.Enabled == 1 && v.InScope(r)
}

// MayInvoke reports whether the server would let the viewer's credential invoke r
// (other refusals, such as an open breaker or a pinned contract, aside): the owner
// always, a token holder when r is in scope and within its risk ceiling.
func (v Viewer) MayInvoke(r *Row) bool {
	switch v.Role {
	case RoleOwner:
		return true
	case RoleToken:
		return v.InScope(r) && (r.Risk() == RiskLow || v.Risk == RiskHigh)
	}
	return false
}
