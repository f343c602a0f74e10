package token

import (
	"crypto/ecdsa"
	"errors"
	"fmt"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Verifier defaults.
const (
	// DefaultLeeway is the clock skew tolerated on exp and iat.
	DefaultLeeway = 5 * time.Second
	// MaxLeeway is the most skew a verifier may be configured to tolerate.
	MaxLeeway = time.Minute
	// DefaultCacheSize is how many verified tokens a verifier remembers.
	DefaultCacheSize = 4096
)

// es256 is the only algorithm a verifier accepts.
var es256 = []jose.SignatureAlgorithm{jose.ES256}

// VerifierConfig configures a Verifier.
type VerifierConfig struct {
	// Keys are the public keys whose tokens are accepted, each known by its key
	// id (KeyID); at least one. During a rotation, list the new key and the old.
	Keys []*ecdsa.PublicKey
	// Audience is the deployment's audience string; required.
	Audience string
	// Leeway is the clock skew tolerated on exp and iat; DefaultLeeway when zero,
	// at most MaxLeeway; negative for none.
	Leeway time.Duration
	// CacheSize bounds the verified-token cache; DefaultCacheSize when zero,
	// negative for no cache.
	CacheSize int
}

func (c *VerifierConfig) setDefaults() {
	switch {
	case c.Leeway == 0:
		c.Leeway = DefaultLeeway
	case c.Leeway < 0:
		c.Leeway = 0
	}
	switch {
	case c.CacheSize == 0:
		c.CacheSize = DefaultCacheSize
	case c.CacheSize < 0:
		c.CacheSize = 0
	}
}

// Validate reports every problem at once.
func (c *VerifierConfig) Validate() error {
	var errs []error
	if len(c.Keys) == 0 {
		errs = append(errs, fmt.Errorf("%w: verifier needs at least one key", ErrConfig))
	}
	for i, k := range c.Keys {
		if _, err := KeyID(k); err != nil {
			errs = append(errs, fmt.Errorf("%w: Keys[%d]: %w", ErrConfig, i, err))
		}
	}
	if err := checkAudience(c.Audience); err != nil {
		errs = append(errs, err)
	}
	if c.Leeway > MaxLeeway {
		errs = append(errs, fmt.Errorf("%w: Leeway %v is over %v", ErrConfig, c.Leeway, MaxLeeway))
	}
	return errors.Join(errs...)
}

// Verifier checks presented tokens. It is safe for concurrent use.
type Verifier struct {
	cfg   VerifierConfig
	keys  map[string]*ecdsa.PublicKey // by key id
	cache *cache
}

// NewVerifier validates cfg and returns the verifier.
func NewVerifier(cfg VerifierConfig) (*Verifier, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	v := &Verifier{cfg: cfg, keys: make(map[string]*ecdsa.PublicKey, len(cfg.Keys)), cache: newCache(cfg.CacheSize)}
	for _, k := range cfg.Keys {
		id, _ := KeyID(k) // checked by Validate
		v.keys[id] = k
	}
	return v, nil
}

// Audience is the audience the verifier accepts.
func (v *Verifier) Audience() string { return v.cfg.Audience }

// Verify authenticates raw (Authenticate) and checks its audience (CheckAudience).
func (v *Verifier) Verify(raw string, now time.Time) (Claims, error) {
	c, err := v.Authenticate(raw, now)
	if err != nil {
		return Claims{}, err
	}
	if err := v.CheckAudience(&c); err != nil {
		return Claims{}, err
	}
	return c, nil
}

// Authenticate checks that raw is a compact JWS of at most MaxLen bytes, signed
// with ES256 (ErrAlgorithm otherwise: none, HS256 and every other algorithm are
// refused before any key is used) by a key this verifier holds, named by its kid
// (ErrUnknownKey), that the signature verifies and is in its low-S form
// (ErrBadSignature), that each segment is canonical base64url (ErrMalformed: a
// token has one string, see form.go), that its claims are capdir's
// (ErrMalformed), and that now is within [iat, exp) widened by the leeway
// (ErrNotYetValid, ErrExpired). It does not check the audience: see
// CheckAudience, and Verify for both.
//
// A token that passes is remembered until it expires: the next Authenticate of
// the same string checks only the times. The returned claims share their slices
// and Body with the cache: read them, do not modify them.
func (v *Verifier) Authenticate(raw string, now time.Time) (Claims, error) {
	if raw == "" || len(raw) > MaxLen {
		return Claims{}, fmt.Errorf("%w: a token is 1 to %d bytes", ErrMalformed, MaxLen)
	}
	h := hashToken(raw)
	if c, ok := v.cache.get(h); ok {
		if err := c.checkTimes(now, v.cfg.Leeway); err != nil {
			v.cache.drop(h)
			return Claims{}, err
		}
		return *c, nil
	}
	c, err := v.authenticate(raw)
	if err != nil {
		return Claims{}, err
	}
	if err := c.checkTimes(now, v.cfg.Leeway); err != nil {
		return Claims{}, err
	}
	v.cache.put(h, &c, c.ExpiryTime().Add(v.cfg.Leeway), now)
	return c, nil
}

// authenticate is Authenticate without the cache and the times.
func (v *Verifier) authenticate(raw string) (Claims, error) {
	if err := checkForm(raw); err != nil {
		return Claims{}, err
	}
	jws, err := jose.ParseSignedCompact(raw, es256)
	if err != nil {
		if _, ok := errors.AsType[*jose.ErrUnexpectedSignatureAlgorithm](err); ok {
			return Claims{}, fmt.Errorf("%w: %v", ErrAlgorithm, err)
		}
		return Claims{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if len(jws.Signatures) != 1 {
		return Claims{}, fmt.Errorf("%w: want one signature", ErrMalformed)
	}
	hdr := jws.Signatures[0].Header
	if hdr.Algorithm != string(jose.ES256) { // ParseSignedCompact checked it; twice is cheap
		return Claims{}, ErrAlgorithm
	}
	pub, ok := v.keys[hdr.KeyID]
	if !ok {
		return Claims{}, ErrUnknownKey
	}
	payload, err := jws.Verify(pub)
	if err != nil {
		return Claims{}, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	if err := checkLowS(jws.Signatures[0].Signature); err != nil {
		return Claims{}, err
	}
	return decodeClaims(payload)
}

// CheckAudience refuses claims minted for another audience (an *AudienceError).
func (v *Verifier) CheckAudience(c *Claims) error {
	if c.Audience != v.cfg.Audience {
		return &AudienceError{Got: c.Audience}
	}
	return nil
}
