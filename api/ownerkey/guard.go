package ownerkey

import (
	"crypto/subtle"
	"errors"
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
	// MaxAddrs bounds the addresses remembered (DefaultMaxAddrs when 0).
	MaxAddrs int
	Clock    func() time.Time
}

// Defaults of Config.
const (
	DefaultLimit    = 10
	DefaultWindow   = time.Minute
	DefaultMaxAddrs = 10000
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
	if c.Clock == nil {
		c.Clock = time.Now
	}
}

// Validate reports every problem of c, joined.
func (c Config) Validate() error {
	var errs []error
	if c.Key == "" {
		errs = append(errs, errors.New("ownerkey: Key is required"))
	}
	if c.Limit < 0 || c.Window < 0 || c.MaxAddrs < 0 {
		errs = append(errs, errors.New("ownerkey: Limit, Window and MaxAddrs must not be negative"))
	}
	return errors.Join(errs...)
}

// Guard checks presented owner keys. Safe for concurrent use.
type Guard struct {
	key     []byte
	limiter *Limiter
}

// New builds a Guard.
func New(cfg Config) (*Guard, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Guard{key: []byte(cfg.Key), limiter: NewLimiter(cfg.Limit, cfg.Window, cfg.MaxAddrs, cfg.Clock)}, nil
}

// Check checks key, presented by r's client: nil when it is the owner key; a
// *ThrottledError, without comparing it, when the client's address is throttled;
// else ErrWrongKey, counted against the address. A right key is never counted.
func (g *Guard) Check(r *http.Request, key string) error {
	addr := ClientAddr(r)
	if err := g.limiter.Blocked(addr); err != nil {
		return err
	}
	if subtle.ConstantTimeCompare([]byte(key), g.key) == 1 {
		return nil
	}
	g.limiter.Fail(addr)
	return ErrWrongKey
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
