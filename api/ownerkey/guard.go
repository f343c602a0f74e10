package ownerkey

import (
	"crypto/subtle"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"
)

// Config configures a Guard; its zero values are the defaults.
type Config struct {
	// Key is the owner key; required.
	Key string
	// Limit wrong keys from one address within Window throttle it (DefaultLimit,
	// DefaultWindow when 0).
	Limit  int
	Window time.Duration
	// MaxAddrs bounds the addresses counted (DefaultMaxAddrs when 0); past it the
	// new ones share one count, which never refuses the right key.
	MaxAddrs int
	// An address the right key came from is remembered for AllowFor after its
	// last right key (DefaultAllowFor when 0), MaxAllowed of them at most
	// (DefaultMaxAllowed when 0): its wrong keys get a count of their own even when
	// the table is full, so the shared count never throttles it.
	AllowFor   time.Duration
	MaxAllowed int
	Clock      func() time.Time
	// Logger is told, once, of each address that reaches Limit (slog.Default()
	// when nil); never of a key.
	Logger *slog.Logger
}

// Defaults of Config.
const (
	DefaultLimit      = 10
	DefaultWindow     = time.Minute
	DefaultMaxAddrs   = 10000
	DefaultAllowFor   = 12 * time.Hour
	DefaultMaxAllowed = 64
)

func (c *Config) setDefaults() {
	if c.Limit == 0 {
		c.Limit = DefaultLimit
	}
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.MaxAddrs == 0 {
		c.MaxAddrs = DefaultMaxAddrs
	}
	if c.AllowFor == 0 {
		c.AllowFor = DefaultAllowFor
	}
	if c.MaxAllowed == 0 {
		c.MaxAllowed = DefaultMaxAllowed
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Validate reports every problem of c, joined.
func (c Config) Validate() error {
	var errs []error
	if c.Key == "" {
		errs = append(errs, errors.New("ownerkey: Key is required"))
	}
	if c.Limit < 0 || c.Window < 0 || c.MaxAddrs < 0 || c.AllowFor < 0 || c.MaxAllowed < 0 {
		errs = append(errs, errors.New("ownerkey: Limit, Window, MaxAddrs, AllowFor and MaxAllowed must not be negative"))
	}
	return errors.Join(errs...)
}

// Guard checks presented owner keys. Safe for concurrent use.
type Guard struct {
	key     []byte
	limiter *limiter
}

// New builds a Guard.
func New(cfg Config) (*Guard, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Guard{key: []byte(cfg.Key), limiter: newLimiter(cfg)}, nil
}

// Check checks key, presented by r's client: nil when it is the owner key; a
// *ThrottledError when the client's address is throttled, whatever the key; else
// ErrWrongKey, counted against the address. A right key is never counted. The key
// is compared in constant time before the address's count is read, and the
// comparison is then ignored for a throttled address, so it learns nothing.
func (g *Guard) Check(r *http.Request, key string) error {
	return g.limiter.check(ClientAddr(r), g.Is(key))
}

// Is compares key with the owner key in constant time, throttling nothing (for
// callers that are not a client's request).
func (g *Guard) Is(key string) bool { return subtle.ConstantTimeCompare([]byte(key), g.key) == 1 }

// ClientAddr is the address r's wrong keys count against: the connection's host
// without its port, an IPv6 address as its /64.
func ClientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	if ip = ip.Unmap(); ip.Is6() {
		return netip.PrefixFrom(ip, 64).Masked().String()
	}
	return ip.String()
}
