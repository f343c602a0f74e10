package token

import (
	"crypto/ecdsa"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestMintDefaults(t *testing.T) {
	k := mustKey(t)
	m := mustMinter(t, k)
	raw, c, err := m.Mint(basicRequest(), t0)
	if err != nil {
		t.Fatal(err)
	}
	if c.IssuedAt != t0.Unix() || c.Expiry != t0.Add(60*time.Second).Unix() {
		t.Fatalf("iat/exp = %d/%d, want a 60 s lifetime from %d", c.IssuedAt, c.Expiry, t0.Unix())
	}
	if c.Risk != RiskLow || c.Audience != testAudience || c.Subject != "agent-7" || len(c.ID) != 32 {
		t.Fatalf("claims = %+v", c)
	}
	hdr, _ := base64.RawURLEncoding.DecodeString(strings.Split(raw, ".")[0])
	for _, want := range []string{`"alg":"ES256"`, `"kid":"` + k.ID() + `"`} {
		if !strings.Contains(string(hdr), want) {
			t.Fatalf("header %s lacks %s", hdr, want)
		}
	}
	_, c2 := mustMint(t, m, basicRequest(), t0)
	if c2.ID == c.ID {
		t.Fatal("two tokens share a jti")
	}
}

func TestMintTTL(t *testing.T) {
	k := mustKey(t)
	m, err := NewMinter(MinterConfig{Key: k, Audience: testAudience, MaxTTL: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	req := basicRequest()
	req.TTL = 10 * time.Minute
	if _, c := mustMint(t, m, req, t0); c.Expiry-c.IssuedAt != 600 {
		t.Fatalf("lifetime = %ds, want 600", c.Expiry-c.IssuedAt)
	}
	req.TTL = 1500 * time.Millisecond // rounded up to whole seconds
	if _, c := mustMint(t, m, req, t0); c.Expiry-c.IssuedAt != 2 {
		t.Fatalf("lifetime = %ds, want 2", c.Expiry-c.IssuedAt)
	}
	// Minted late in a second, a token still lives its whole ttl: exp is
	// now + ttl rounded up, not the second now falls in + ttl.
	for _, ttl := range []time.Duration{time.Second, 1500 * time.Millisecond, time.Minute} {
		for _, into := range []time.Duration{0, time.Millisecond, 500 * time.Millisecond, 999 * time.Millisecond} {
			now := t0.Truncate(time.Second).Add(into)
			req.TTL = ttl
			_, c := mustMint(t, m, req, now)
			if life := c.ExpiryTime().Sub(now); life < ttl || life >= ttl+time.Second {
				t.Errorf("ttl %v minted %v into a second: lives %v, want [%v, %v)", ttl, into, life, ttl, ttl+time.Second)
			}
			if c.IssuedAt != now.Unix() {
				t.Errorf("iat = %d, want the second now falls in, %d", c.IssuedAt, now.Unix())
			}
		}
	}
	req.TTL = 10*time.Minute + time.Second
	if _, _, err := m.Mint(req, t0); !errors.Is(err, ErrTTLTooLong) || !strings.Contains(err.Error(), "10m1s > 10m0s") {
		t.Fatalf("Mint over MaxTTL = %v, want ErrTTLTooLong naming both", err)
	}
}

func TestMintBodyAbsentVersusEmpty(t *testing.T) {
	m := mustMinter(t, mustKey(t))
	v := mustVerifier(t, VerifierConfig{Keys: []*ecdsa.PublicKey{m.cfg.Key.Public()}})
	req := basicRequest()
	raw, _ := mustMint(t, m, req, t0)
	c, err := v.Verify(raw, t0)
	if err != nil || c.Body != nil {
		t.Fatalf("no fixed body: Body = %v, err = %v", c.Body, err)
	}
	empty := ""
	req.Body = &empty
	raw, _ = mustMint(t, m, req, t0)
	payload, _ := base64.RawURLEncoding.DecodeString(strings.Split(raw, ".")[1])
	if !strings.Contains(string(payload), `"body":""`) {
		t.Fatalf("an empty fixed body is not in the payload: %s", payload)
	}
	c, err = v.Verify(raw, t0)
	if err != nil || c.Body == nil || *c.Body != "" {
		t.Fatalf("empty fixed body: Body = %v, err = %v", c.Body, err)
	}
}

func TestMintRefusals(t *testing.T) {
	m := mustMinter(t, mustKey(t))
	body := "a|b|c"
	fp := strings.Repeat("ab", 32)
	cases := []struct {
		name string
		edit func(*MintRequest)
		want error
		msg  string
	}{
		{"empty scope", func(r *MintRequest) { r.Scope = Scope{} }, ErrEmptyScope, "at least one key or category"},
		{"empty scope lists", func(r *MintRequest) { r.Scope = Scope{Keys: []string{}, Categories: []string{}} }, ErrEmptyScope, "scope"},
		{"bad risk", func(r *MintRequest) { r.Risk = "medium" }, ErrBadRisk, `"medium"`},
		{"risk case", func(r *MintRequest) { r.Risk = "HIGH" }, ErrBadRisk, `"HIGH"`},
		{"ttl over max", func(r *MintRequest) { r.TTL = 2 * time.Hour }, ErrTTLTooLong, "2h0m0s > 1h0m0s"},
		{"ttl negative", func(r *MintRequest) { r.TTL = -time.Second }, ErrBadTTL, "-1s"},
		{"ttl under a second", func(r *MintRequest) { r.TTL = time.Millisecond }, ErrBadTTL, "1ms"},
		{"no subject", func(r *MintRequest) { r.Subject = "" }, ErrBadSubject, "1 to 128"},
		{"subject space", func(r *MintRequest) { r.Subject = "agent 7" }, ErrBadSubject, "outside"},
		{"subject too long", func(r *MintRequest) { r.Subject = strings.Repeat("a", 129) }, ErrBadSubject, "1 to 128"},
		{"owner subject", func(r *MintRequest) { r.Subject = "owner" }, ErrOwnerSubject, `"owner"`},
		{"owner actor subject", func(r *MintRequest) { r.Subject = "owner:terminal-key" }, ErrOwnerSubject, "owner:terminal-key"},
		{"owner subject case", func(r *MintRequest) { r.Subject = "Owner:x" }, ErrOwnerSubject, "Owner:x"},
		{"bad scope key", func(r *MintRequest) { r.Scope.Keys = []string{"A.B"} }, ErrBadScope, `"A.B"`},
		{"wildcard scope key", func(r *MintRequest) { r.Scope.Keys = []string{">"} }, ErrBadScope, `">"`},
		{"empty category", func(r *MintRequest) { r.Scope.Categories = []string{""} }, ErrBadScope, "category"},
		{"control in category", func(r *MintRequest) { r.Scope.Categories = []string{"a\nb"} }, ErrBadScope, "printable"},
		{"pin not hex", func(r *MintRequest) { r.Scope = Scope{Keys: []string{"GREET"}}; r.Pin = "xyz" }, ErrBadPin, "64 lower-case hex"},
		{"pin upper case", func(r *MintRequest) { r.Scope = Scope{Keys: []string{"GREET"}}; r.Pin = strings.ToUpper(fp) }, ErrBadPin, "hex"},
		{"pin on two keys", func(r *MintRequest) { r.Scope = Scope{Keys: []string{"A", "B"}}; r.Pin = fp }, ErrBadPin, "exactly the one key"},
		{"pin with category", func(r *MintRequest) { r.Pin = fp }, ErrBadPin, "exactly the one key"},
		{"max_payload negative", func(r *MintRequest) { r.MaxPayload = -1 }, ErrBadMaxPayload, "negative"},
		{"body over max_payload", func(r *MintRequest) { r.Body = &body; r.MaxPayload = 2 }, ErrBadMaxPayload, "5 bytes, over max_payload 2"},
		{"too large", func(r *MintRequest) {
			for i := range 1000 {
				r.Scope.Keys = append(r.Scope.Keys, "KEY_NUMBER_"+strings.Repeat("X", i%20))
			}
		}, ErrTooLarge, "at most 8192"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := basicRequest()
			tc.edit(&req)
			raw, c, err := m.Mint(req, t0)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Mint = %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %q does not say %q", err, tc.msg)
			}
			if raw != "" || c.ID != "" {
				t.Fatal("a refused mint returned a token")
			}
		})
	}
}

func TestMinterConfigValidate(t *testing.T) {
	_, err := NewMinter(MinterConfig{DefaultTTL: 2 * time.Hour})
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("NewMinter = %v, want ErrConfig", err)
	}
	for _, want := range []string{"needs a Key", "Audience must be", "DefaultTTL 2h0m0s"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not report %q", err, want)
		}
	}
	if _, err := NewMinter(MinterConfig{Key: mustKey(t), Audience: "has space"}); !errors.Is(err, ErrConfig) {
		t.Fatalf("audience with a space: %v", err)
	}
}
