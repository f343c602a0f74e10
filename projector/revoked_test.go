package projector_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// A TOKEN_REVOKED event is folded into the projection (the digest covers it, so
// a replay gives it back), answered from memory, kept across a reopen, and held in
// memory only until the token it names has surely expired. A revocation that is
// not well-formed changes nothing.
func TestTokenRevocationsFolded(t *testing.T) {
	l := logtest.Open(t, "")
	now := t0
	clock := func() time.Time { return now }
	exp := t0.Add(time.Hour).Unix()
	appendEv(t, l, wire.TokenSubject("aaaa"), t0, wire.TypeTokenRevoked, wire.TokenRevoked{JTI: "aaaa", Exp: exp})
	appendEv(t, l, wire.TokenSubject("bbbb"), t0, wire.TypeTokenRevoked, wire.TokenRevoked{JTI: "bbbb", Exp: t0.Add(time.Minute).Unix()})
	// Not well-formed: another token's subject, a bad id, no exp.
	appendEv(t, l, wire.TokenSubject("aaaa"), t0, wire.TypeTokenRevoked, wire.TokenRevoked{JTI: "cccc", Exp: exp})
	appendEv(t, l, "capdir.ctl.token.x", t0, wire.TypeTokenRevoked, wire.TokenRevoked{JTI: "x.y", Exp: exp})
	appendEv(t, l, wire.TokenSubject("dddd"), t0, wire.TypeTokenRevoked, wire.TokenRevoked{JTI: "dddd"})

	path := filepath.Join(t.TempDir(), "p.db")
	p, err := projector.Open(projector.Config{Path: path, Log: l, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if p.Revoked("aaaa") {
		t.Fatal("revoked before the fold")
	}
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	for jti, want := range map[string]bool{"aaaa": true, "bbbb": true, "cccc": false, "x.y": false, "dddd": false, "eeee": false} {
		if got := p.Revoked(jti); got != want {
			t.Errorf("Revoked(%s) = %v, want %v", jti, got, want)
		}
	}
	live, err := p.Digest()
	if err != nil {
		t.Fatal(err)
	}
	p.Close()

	// The digest covers the revocations: a projection without them differs.
	bare := filepath.Join(t.TempDir(), "bare.db")
	pb, err := projector.Open(projector.Config{Path: bare})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := pb.Digest(); d == live {
		t.Fatal("the digest does not cover the revoked tokens")
	}
	pb.Close()
	rebuilt := filepath.Join(t.TempDir(), "rebuilt.db")
	if err := projector.Rebuild(t.Context(), projector.Config{Path: rebuilt, Log: l}, nil); err != nil {
		t.Fatal(err)
	}
	if d, _ := projector.FileDigest(rebuilt); d != live {
		t.Fatalf("replayed digest %s != live %s", d, live)
	}

	// Reopened two minutes on: bbbb's token has expired (exp + the leeway has
	// passed), so its revocation is no longer held in memory; aaaa's is.
	now = t0.Add(2 * time.Minute)
	p2, err := projector.Open(projector.Config{Path: path, Log: l, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if !p2.Revoked("aaaa") || p2.Revoked("bbbb") {
		t.Fatalf("after reopen: aaaa %v (want true), bbbb %v (want false)", p2.Revoked("aaaa"), p2.Revoked("bbbb"))
	}
	if d, _ := p2.Digest(); d != live {
		t.Fatal("dropping a revocation from memory changed the projection")
	}
}

// The memory horizon is at least the leeway any verifier may be configured with,
// so a revocation is never forgotten while a verifier would still accept its token.
func TestRevokedLeewayCoversVerifiers(t *testing.T) {
	if projector.RevokedLeeway < token.MaxLeeway {
		t.Fatalf("revocations are held %v past exp, verifiers tolerate up to %v", projector.RevokedLeeway, token.MaxLeeway)
	}
}
