package projector_test

import (
	"path/filepath"
	"testing"

	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// Upstream registrations are folded into the projection: a later registration
// replaces an earlier one, a removal deletes it, the digest covers them (a replay
// gives them back), and a reopened projection answers them from memory. Forged
// registrations (another upstream's subject, a name that is not one subject
// token, no URL) change nothing, and a command an event carries is never read.
func TestUpstreamRegistrationsFolded(t *testing.T) {
	l := logtest.Open(t, "")
	reg := func(subj string, data any) { appendEv(t, l, subj, t0, wire.TypeUpstreamRegistered, data) }
	reg(wire.UpstreamSubject("github"), wire.UpstreamRegistered{Name: "github", URL: "https://old.example/mcp"})
	reg(wire.UpstreamSubject("github"), wire.UpstreamRegistered{Name: "github", URL: "https://mcp.example/mcp", Auth: "bearer:GITHUB_TOKEN"})
	reg(wire.UpstreamSubject("gone"), wire.UpstreamRegistered{Name: "gone", URL: "https://gone.example/mcp"})
	appendEv(t, l, wire.UpstreamSubject("gone"), t0, wire.TypeUpstreamRemoved, wire.UpstreamRemoved{Name: "gone"})
	// Forged: another upstream's subject, a bad name, no URL, a removal of
	// another name, and a command smuggled into the data.
	reg(wire.UpstreamSubject("github"), wire.UpstreamRegistered{Name: "evil", URL: "https://evil.example/mcp"})
	reg("capdir.ctl.upstream.a", wire.UpstreamRegistered{Name: "a.b", URL: "https://evil.example/mcp"})
	reg(wire.UpstreamSubject("nourl"), wire.UpstreamRegistered{Name: "nourl"})
	appendEv(t, l, wire.UpstreamSubject("other"), t0, wire.TypeUpstreamRemoved, wire.UpstreamRemoved{Name: "github"})
	reg(wire.UpstreamSubject("shell"), map[string]any{"name": "shell", "url": "https://shell.example/mcp", "command": []string{"sh", "-c", "id"}})
	// On a directory subject it is not an upstream registration.
	reg(wire.DirectorySubject("github"), wire.UpstreamRegistered{Name: "github", URL: "https://dir.example/mcp"})

	path := filepath.Join(t.TempDir(), "p.db")
	p := open(t, path, l)
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	got := p.Upstreams()
	if len(got) != 2 || got[0].Name != "github" || got[1].Name != "shell" {
		t.Fatalf("Upstreams = %+v, want github and shell", got)
	}
	if g := got[0]; g.URL != "https://mcp.example/mcp" || g.Auth != "bearer:GITHUB_TOKEN" {
		t.Fatalf("github = %+v, want the second registration", g)
	}
	for _, name := range []string{"gone", "evil", "a.b", "nourl", "other"} {
		if _, ok := p.Upstream(name); ok {
			t.Errorf("Upstream(%s) is registered", name)
		}
	}
	live, err := p.Digest()
	if err != nil {
		t.Fatal(err)
	}
	p.Close()

	bare := filepath.Join(t.TempDir(), "bare.db")
	pb := open(t, bare, nil)
	if d, _ := pb.Digest(); d == live {
		t.Fatal("the digest does not cover the upstreams")
	}
	pb.Close()
	rebuilt := filepath.Join(t.TempDir(), "rebuilt.db")
	if err := projector.Rebuild(t.Context(), projector.Config{Path: rebuilt, Log: l}, nil); err != nil {
		t.Fatal(err)
	}
	if d, _ := projector.FileDigest(rebuilt); d != live {
		t.Fatalf("replayed digest %s != live %s", d, live)
	}
	p2 := open(t, path, l)
	defer p2.Close()
	if u, ok := p2.Upstream("github"); !ok || u.URL != "https://mcp.example/mcp" {
		t.Fatalf("after reopen: github = %+v, %v", u, ok)
	}
}

// A watcher of the upstreams is told the name of every registration and removal
// committed.
func TestWatchUpstreams(t *testing.T) {
	l := logtest.Open(t, "")
	p := open(t, filepath.Join(t.TempDir(), "p.db"), l)
	defer p.Close()
	var names []string
	p.WatchUpstreams(func(name string) { names = append(names, name) })
	appendEv(t, l, wire.UpstreamSubject("a"), t0, wire.TypeUpstreamRegistered, wire.UpstreamRegistered{Name: "a", URL: "http://a.example/"})
	appendEv(t, l, wire.UpstreamSubject("a"), t0, wire.TypeUpstreamRemoved, wire.UpstreamRemoved{Name: "a"})
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	if len(names) != 2 || names[0] != "a" || names[1] != "a" {
		t.Fatalf("watched %v, want [a a]", names)
	}
}
