package token

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/jsonone"
)

// Risk ceilings. A row marked sensitive is "high"; every other row is "low".
const (
	RiskLow  = "low"
	RiskHigh = "high"
)

// OwnerSubject is the owner's subject. A token's subject may never be it, nor
// start with "owner:" (the owner's actor, e.g. "owner:terminal-key"), in any case.
const OwnerSubject = "owner"

// MaxLen is the longest token a verifier reads and a minter makes, in bytes.
const MaxLen = 8 << 10

// Scope is what a token may invoke: a row whose key is in Keys, or whose category
// is in Categories.
type Scope struct {
	Keys       []string `json:"keys,omitempty"`
	Categories []string `json:"categories,omitempty"`
}

// Empty reports whether the scope names nothing.
func (s Scope) Empty() bool { return len(s.Keys) == 0 && len(s.Categories) == 0 }

// HasKey reports whether key is named in the scope.
func (s Scope) HasKey(key string) bool { return slices.Contains(s.Keys, key) }

// HasCategory reports whether category is named in the scope. The empty category
// is never in scope.
func (s Scope) HasCategory(category string) bool {
	return category != "" && slices.Contains(s.Categories, category)
}

// Claims is a token's payload. Times are Unix seconds.
type Claims struct {
	ID       string `json:"jti"`
	IssuedAt int64  `json:"iat"`
	Expiry   int64  `json:"exp"`
	Audience string `json:"aud"`
	Subject  string `json:"sub"`
	Scope    Scope  `json:"scope"`
	// Risk is the ceiling, RiskLow or RiskHigh.
	Risk string `json:"risk"`
	// Pin is the contract fingerprint the token is bound to; empty for none.
	Pin string `json:"pin,omitempty"`
	// Body is the one body the token may send; nil for any. A non-nil empty
	// string allows only the empty body.
	Body *string `json:"body,omitempty"`
	// MaxPayload is the largest body the token may send, in bytes; 0 for no
	// ceiling of its own (the deployment's still applies).
	MaxPayload int `json:"max_payload,omitempty"`
}

// IssuedTime is iat as a time.
func (c *Claims) IssuedTime() time.Time { return time.Unix(c.IssuedAt, 0).UTC() }

// ExpiryTime is exp as a time.
func (c *Claims) ExpiryTime() time.Time { return time.Unix(c.Expiry, 0).UTC() }

// IsOwnerSubject reports whether sub names the owner.
func IsOwnerSubject(sub string) bool {
	return strings.EqualFold(sub, OwnerSubject) ||
		len(sub) > len(OwnerSubject) && strings.EqualFold(sub[:len(OwnerSubject)+1], OwnerSubject+":")
}

// decodeClaims decodes a verified payload strictly: one JSON object, no claim this
// version does not know, every required claim present and well-formed.
func decodeClaims(payload []byte) (Claims, error) {
	var c Claims
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	switch err := jsonone.Decode(dec, &c); {
	case errors.Is(err, jsonone.ErrTrailingData):
		return Claims{}, fmt.Errorf("%w: claims: trailing data", ErrMalformed)
	case err != nil:
		return Claims{}, fmt.Errorf("%w: claims: %v", ErrMalformed, err)
	}
	if err := c.wellFormed(); err != nil {
		return Claims{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return c, nil
}

// wellFormed checks the claims' shape, as Mint makes them.
func (c *Claims) wellFormed() error {
	switch {
	case c.ID == "":
		return errors.New("token: jti missing")
	case c.IssuedAt <= 0 || c.Expiry <= c.IssuedAt:
		return errors.New("token: iat and exp must be after 1970, exp after iat")
	case c.Audience == "":
		return errors.New("token: aud missing")
	case c.MaxPayload < 0:
		return fmt.Errorf("%w: negative", ErrBadMaxPayload)
	}
	if err := checkSubject(c.Subject); err != nil {
		return err
	}
	if err := checkRisk(c.Risk); err != nil {
		return err
	}
	if err := checkScope(c.Scope); err != nil {
		return err
	}
	return checkPin(c.Pin, c.Scope)
}

// checkTimes refuses claims outside [iat-leeway, exp+leeway).
func (c *Claims) checkTimes(now time.Time, leeway time.Duration) error {
	if !now.Before(c.ExpiryTime().Add(leeway)) {
		return ErrExpired
	}
	if now.Before(c.IssuedTime().Add(-leeway)) {
		return ErrNotYetValid
	}
	return nil
}

func checkSubject(sub string) error {
	if sub == "" || len(sub) > 128 {
		return fmt.Errorf("%w: subject must be 1 to 128 characters", ErrBadSubject)
	}
	for i := 0; i < len(sub); i++ {
		c := sub[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("._:@/-", c) >= 0) {
			return fmt.Errorf("%w: %q has a character outside A-Z a-z 0-9 . _ : @ / -", ErrBadSubject, sub)
		}
	}
	return nil
}

func checkRisk(risk string) error {
	if risk != RiskLow && risk != RiskHigh {
		return fmt.Errorf("%w, not %q", ErrBadRisk, risk)
	}
	return nil
}

func checkScope(s Scope) error {
	if s.Empty() {
		return ErrEmptyScope
	}
	for _, k := range s.Keys {
		if !wire.ValidKey(k) {
			return fmt.Errorf("%w: key %q is not 1 to %d characters of A-Z a-z 0-9 _ -", ErrBadScope, k, wire.MaxKeyLen)
		}
	}
	for _, c := range s.Categories {
		if c == "" || len(c) > 128 || strings.ContainsFunc(c, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			return fmt.Errorf("%w: category %q must be 1 to 128 printable characters", ErrBadScope, c)
		}
	}
	return nil
}

// checkPin accepts no pin, or a fingerprint on a scope of exactly one key: a pin
// binds the token to one row's contract, so any other row would always refuse.
func checkPin(pin string, s Scope) error {
	if pin == "" {
		return nil
	}
	if len(pin) != 64 || strings.ContainsFunc(pin, func(r rune) bool { return !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') }) {
		return fmt.Errorf("%w: %q is not a contract fingerprint (64 lower-case hex digits)", ErrBadPin, pin)
	}
	if len(s.Keys) != 1 || len(s.Categories) != 0 {
		return fmt.Errorf("%w: a pinned token's scope must be exactly the one key whose contract it pins", ErrBadPin)
	}
	return nil
}
