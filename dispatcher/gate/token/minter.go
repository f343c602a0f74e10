package token

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Lifetimes.
const (
	// DefaultTTL is a token's lifetime when the mint request names none.
	DefaultTTL = 60 * time.Second
	// DefaultMaxTTL is the longest lifetime a minter grants unless configured.
	DefaultMaxTTL = time.Hour
)

// MinterConfig configures a Minter.
type MinterConfig struct {
	// Key signs every token; required.
	Key *Key
	// Audience is the deployment's audience string, carried as "aud"; required,
	// and equal to the verifiers' Audience.
	Audience string
	// DefaultTTL is the lifetime of a token whose request names none; DefaultTTL
	// when zero.
	DefaultTTL time.Duration
	// MaxTTL is the longest lifetime the minter grants; DefaultMaxTTL when zero.
	MaxTTL time.Duration
	// Rand is the source of token ids; crypto/rand when nil.
	Rand io.Reader
}

func (c *MinterConfig) setDefaults() {
	if c.DefaultTTL == 0 {
		c.DefaultTTL = DefaultTTL
	}
	if c.MaxTTL == 0 {
		c.MaxTTL = DefaultMaxTTL
	}
	if c.Rand == nil {
		c.Rand = rand.Reader
	}
}

// Validate reports every problem at once.
func (c *MinterConfig) Validate() error {
	var errs []error
	if c.Key == nil {
		errs = append(errs, fmt.Errorf("%w: minter needs a Key", ErrConfig))
	}
	if err := checkAudience(c.Audience); err != nil {
		errs = append(errs, err)
	}
	if c.MaxTTL < time.Second {
		errs = append(errs, fmt.Errorf("%w: MaxTTL %v is under 1s", ErrConfig, c.MaxTTL))
	}
	if c.DefaultTTL < time.Second || c.DefaultTTL > c.MaxTTL {
		errs = append(errs, fmt.Errorf("%w: DefaultTTL %v must be between 1s and MaxTTL (%v)", ErrConfig, c.DefaultTTL, c.MaxTTL))
	}
	return errors.Join(errs...)
}

func checkAudience(aud string) error {
	if aud == "" || len(aud) > 256 {
		return fmt.Errorf("%w: Audience must be 1 to 256 characters", ErrConfig)
	}
	for i := 0; i < len(aud); i++ {
		if aud[i] <= ' ' || aud[i] >= 0x7f {
			return fmt.Errorf("%w: Audience %q must be printable ASCII without spaces", ErrConfig, aud)
		}
	}
	return nil
}

// MintRequest is what the owner asks a token to permit.
type MintRequest struct {
	// Subject names the holder; it becomes "sub" and the receipts' actor. Required;
	// 1 to 128 of A-Z a-z 0-9 . _ : @ / -; never the owner.
	Subject string
	// Scope names the keys and/or categories the token may invoke; not empty.
	Scope Scope
	// Risk is the ceiling, RiskLow (the default when empty) or RiskHigh.
	Risk string
	// Pin binds the token to one row's contract fingerprint; the scope must then
	// be exactly that row's key.
	Pin string
	// Body, when set, is the only body the token may send.
	Body *string
	// MaxPayload, when positive, is the largest body the token may send.
	MaxPayload int
	// TTL is the lifetime; the minter's DefaultTTL when zero.
	TTL time.Duration
}

// Minter makes tokens. It is safe for concurrent use when its Rand is.
type Minter struct {
	cfg    MinterConfig
	signer jose.Signer
}

// NewMinter validates cfg and returns the minter.
func NewMinter(cfg MinterConfig) (*Minter, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	signer, err := jose.NewSigner(jose.SigningKey{
		Algorithm: jose.ES256,
		Key:       jose.JSONWebKey{Key: cfg.Key.priv, KeyID: cfg.Key.id, Algorithm: string(jose.ES256)},
	}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return nil, fmt.Errorf("token: signer: %w", err)
	}
	return &Minter{cfg: cfg, signer: signer}, nil
}

// MaxTTL is the longest lifetime the minter grants.
func (m *Minter) MaxTTL() time.Duration { return m.cfg.MaxTTL }

// Mint checks req and returns the signed token and its claims, issued at now.
// A token lives at least the lifetime asked for: its exp is now + ttl rounded
// up to a whole second.
func (m *Minter) Mint(req MintRequest, now time.Time) (string, Claims, error) {
	c, err := m.claims(req, now)
	if err != nil {
		return "", Claims{}, err
	}
	payload, err := json.Marshal(&c)
	if err != nil {
		return "", Claims{}, fmt.Errorf("token: encode claims: %w", err)
	}
	sig, err := m.signer.Sign(payload)
	if err != nil {
		return "", Claims{}, fmt.Errorf("token: sign: %w", err)
	}
	raw, err := sig.CompactSerialize()
	if err != nil {
		return "", Claims{}, fmt.Errorf("token: serialize: %w", err)
	}
	if raw, err = LowS(raw); err != nil { // the one form a verifier accepts (form.go)
		return "", Claims{}, err
	}
	if len(raw) > MaxLen {
		return "", Claims{}, fmt.Errorf("%w: %d bytes, at most %d: name fewer keys or categories, or a shorter fixed body", ErrTooLarge, len(raw), MaxLen)
	}
	return raw, c, nil
}

// claims builds and checks the claims of req.
func (m *Minter) claims(req MintRequest, now time.Time) (Claims, error) {
	ttl := req.TTL
	if ttl == 0 {
		ttl = m.cfg.DefaultTTL
	}
	switch {
	case ttl < time.Second:
		return Claims{}, fmt.Errorf("%w, not %v", ErrBadTTL, ttl)
	case ttl > m.cfg.MaxTTL:
		return Claims{}, fmt.Errorf("%w: %v > %v; mint a shorter-lived token", ErrTTLTooLong, ttl, m.cfg.MaxTTL)
	}
	if IsOwnerSubject(req.Subject) {
		return Claims{}, fmt.Errorf("%w: %q", ErrOwnerSubject, req.Subject)
	}
	if req.Risk == "" {
		req.Risk = RiskLow
	}
	if req.MaxPayload < 0 {
		return Claims{}, fmt.Errorf("%w: %d is negative; 0 means no ceiling", ErrBadMaxPayload, req.MaxPayload)
	}
	if req.Body != nil && req.MaxPayload > 0 && len(*req.Body) > req.MaxPayload {
		return Claims{}, fmt.Errorf("%w: the fixed body is %d bytes, over max_payload %d", ErrBadMaxPayload, len(*req.Body), req.MaxPayload)
	}
	id, err := m.newID()
	if err != nil {
		return Claims{}, err
	}
	// Times are whole seconds: iat is the second now falls in, and exp the first
	// whole second at or after now + ttl, so a token lives at least its ttl (and
	// less than a second more), wherever in its second it was minted.
	iat := now.Unix()
	end := now.Add(ttl)
	exp := end.Unix()
	if end.Nanosecond() != 0 {
		exp++
	}
	c := Claims{
		ID: id, IssuedAt: iat, Expiry: exp,
		Audience: m.cfg.Audience, Subject: req.Subject, Scope: req.Scope, Risk: req.Risk,
		Pin: req.Pin, Body: req.Body, MaxPayload: req.MaxPayload,
	}
	if err := c.wellFormed(); err != nil { // what every verifier checks
		return Claims{}, err
	}
	return c, nil
}

// newID is a fresh token id: 16 random bytes in hex.
func (m *Minter) newID() (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(m.cfg.Rand, b[:]); err != nil {
		return "", fmt.Errorf("token: token id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
