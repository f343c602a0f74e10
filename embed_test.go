package capdir_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

// A Node is reached through its methods: a program that embeds it can replace
// none of its components.
func TestNodeExportsNoField(t *testing.T) {
	typ := reflect.TypeFor[capdir.Node]()
	for i := range typ.NumField() {
		if f := typ.Field(i); f.IsExported() {
			t.Errorf("Node exports field %s %s; reach it through a method", f.Name, f.Type)
		}
	}
}

// Config holds what the node does; what it is wired to (a clock, a logger, the
// environment, a listener) is an Option of Start.
func TestConfigHoldsNoWiring(t *testing.T) {
	wiring := map[reflect.Type]string{
		reflect.TypeFor[func() time.Time](): "WithClock",
		reflect.TypeFor[*slog.Logger]():     "WithLogger",
		reflect.TypeFor[runner.Env]():       "WithEnv",
		reflect.TypeFor[net.Listener]():     "WithListener",
	}
	typ := reflect.TypeFor[capdir.Config]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if opt, ok := wiring[f.Type]; ok {
			t.Errorf("Config.%s is wiring; pass capdir.%s to Start", f.Name, opt)
		}
	}
}

// shoutRow writes SHOUT (fn echo) through the node's directory.
func shoutRow(t *testing.T, n *capdir.Node) {
	t.Helper()
	_, err := n.Directory().Create(t.Context(), contract.FieldsFromRow(contract.Row{
		Key: "SHOUT", Type: "fn", Target: "echo", Enabled: 1, Content: "# WHAT: Echo the text.\n# ARGS: $1=text\n[\"$1\"]",
	}))
	if err != nil {
		t.Fatalf("create SHOUT: %v", err)
	}
}

// Node.Invoke is a call as the facade makes one: without a credential it is
// the owner's; with a token, the token's, refused when the token does not hold
// or does not cover the key; a malformed or oversized request is refused before
// anything is appended.
func TestNodeInvoke(t *testing.T) {
	n := nodetest.Start(t, nil)
	shoutRow(t, n)
	ctx := t.Context()

	rc, err := n.Invoke(ctx, wire.InvocationRequest{Key: "SHOUT", Body: "hi"})
	if err != nil || rc.Status != wire.StatusProvenMaterialResult || rc.Result != "hi" || rc.Actor != wire.OwnerActor {
		t.Fatalf("owner's call: %v %s %q by %q", err, rc.Status, rc.Result, rc.Actor)
	}

	covers, _, err := n.Mint(token.MintRequest{Subject: "agent-1", Scope: token.Scope{Keys: []string{"SHOUT"}}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := n.Mint(token.MintRequest{Subject: "agent-2", Scope: token.Scope{Keys: []string{"ELSEWHERE"}}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, token, status string
	}{
		{"a token that covers the key", covers, wire.StatusProvenMaterialResult},
		{"a token for another key", other, wire.StatusRefusedScope},
		{"a forged token", strings.Replace(covers, ".", ".x", 1), wire.StatusRefusedToken},
		{"not a token", "hostile\x00<script>", wire.StatusRefusedToken},
	} {
		rc, err := n.Invoke(ctx, wire.InvocationRequest{Key: "SHOUT", Body: "hi", Token: tc.token})
		if err != nil || rc.Status != tc.status {
			t.Errorf("%s: %v %s %s; want %s", tc.name, err, rc.Status, rc.Result, tc.status)
		}
		if strings.Contains(rc.Body+rc.Result, tc.token) {
			t.Errorf("%s: the receipt copies the token", tc.name)
		}
	}

	seq, err := n.Log().LastSeq(ctx, wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Invoke(ctx, wire.InvocationRequest{Key: "not a key", Body: "hi"}); err == nil {
		t.Error("a malformed key was taken")
	}
	if _, err := n.Invoke(ctx, wire.InvocationRequest{Key: "SHOUT", Body: strings.Repeat("x", 8<<20)}); !errors.Is(err, dispatcher.ErrPayloadTooLarge) {
		t.Errorf("an oversized body: %v; want ErrPayloadTooLarge", err)
	}
	if after, _ := n.Log().LastSeq(ctx, wire.DataStream); after != seq {
		t.Errorf("refused requests were appended: data stream %d -> %d", seq, after)
	}
}

// Node.Mint mints with the node's key and audience at the node's clock, and
// refuses a request its minter refuses.
func TestNodeMint(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	n := nodetest.Start(t, nil, capdir.WithClock(func() time.Time { return at }))
	raw, c, err := n.Mint(token.MintRequest{Subject: "agent-1", Scope: token.Scope{Keys: []string{"SHOUT"}}, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if c.IssuedAt != at.Unix() || c.Audience != n.Config().TokenAudience {
		t.Errorf("claims issued at %d for %q; want %d for %q", c.IssuedAt, c.Audience, at.Unix(), n.Config().TokenAudience)
	}
	if _, err := n.Verifier().Verify(raw, at); err != nil {
		t.Errorf("the node's verifier refuses its own token: %v", err)
	}
	if _, _, err := n.Mint(token.MintRequest{Scope: token.Scope{Keys: []string{"SHOUT"}}}); err == nil {
		t.Error("a token without a subject was minted")
	}
}

// Drain stops the node taking calls and lets those in flight finish; what they
// wrote stays readable until Stop, which closes what Start made and closes Done.
func TestNodeDrainThenStop(t *testing.T) {
	n := nodetest.Start(t, nil)
	shoutRow(t, n)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	rc, err := n.Invoke(ctx, wire.InvocationRequest{Key: "SHOUT", Body: "before"})
	if err != nil || rc.Status != wire.StatusProvenMaterialResult {
		t.Fatalf("call: %v %s", err, rc.Status)
	}
	if err := n.Drain(ctx); err != nil {
		t.Fatalf("drain: %v", err)
	}
	if err := n.Drain(ctx); err != nil {
		t.Fatalf("a second drain: %v", err)
	}
	if err := nodetest.CatchUp(ctx, n); err != nil {
		t.Fatal(err)
	}
	if got, _, err := n.Projector().Receipt(rc.InvocationID); err != nil || got.Result != "before" {
		t.Errorf("after Drain the receipt reads %+v, %v", got, err)
	}
	select {
	case <-n.Done():
		t.Fatal("Done closed by Drain")
	default:
	}
	if err := n.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	select {
	case <-n.Done():
	default:
		t.Fatal("Done still open after Stop")
	}
	if err := capdir.CheckFree(n.Config().Log.DataDir); err != nil {
		t.Errorf("the data dir is still held after Stop: %v", err)
	}
}

// A Start that fails after it opened the log and the projection (here: the
// HTTP address cannot be listened on) closes what it made, releases the data
// dir and closes the listener it was given.
func TestStartFailureUnwinds(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := capdir.Config{TerminalKey: nodetest.Key, Log: eventlog.Config{DataDir: dir}, Dispatch: dispatcher.Settings{Workers: -1}}
	if _, err := capdir.Start(t.Context(), cfg, capdir.WithListener(ln), nodetest.Quiet()); err == nil {
		t.Fatal("a node with -1 workers started")
	}
	if _, err := ln.Accept(); err == nil || !errors.Is(err, net.ErrClosed) {
		t.Errorf("the listener was left open: %v", err)
	}

	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg = capdir.Config{TerminalKey: nodetest.Key, Log: eventlog.Config{DataDir: dir}, HTTP: capdir.HTTPConfig{Addr: taken.Addr().String()}}
	if _, err := capdir.Start(t.Context(), cfg, nodetest.Quiet()); err == nil || !strings.Contains(err.Error(), "listen") {
		t.Fatalf("start on a taken address: %v", err)
	}
	if err := capdir.CheckFree(dir); err != nil {
		t.Errorf("a failed start left the data dir held: %v", err)
	}
	cfg.HTTP.Addr = "127.0.0.1:0"
	n := nodetest.Start(t, func(c *capdir.Config) { *c = cfg })
	if code, body := nodetest.Do(t, n, "GET", "/api/directory", ""); code != 200 {
		t.Errorf("a node after the failed start: %d %s", code, body)
	}
}

// The node's long-lived components share one lifecycle: Close is idempotent and
// Done is closed once it has run. After Stop, every one is done, and closing it
// again returns what the first close did.
func TestComponentsShareOneLifecycle(t *testing.T) {
	type component interface {
		Close() error
		Done() <-chan struct{}
	}
	n := nodetest.Start(t, nil)
	parts := map[string]any{"log": n.Log(), "projector": n.Projector(), "dispatcher": n.Dispatcher(), "mcp": n.MCP()}
	for name, p := range parts {
		c, ok := p.(component)
		if !ok {
			t.Fatalf("the %s (%T) has no Close() error and Done()", name, p)
		}
		select {
		case <-c.Done():
			t.Errorf("the %s is done before Stop", name)
		default:
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := n.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	for name, p := range parts {
		c := p.(component)
		select {
		case <-c.Done():
		default:
			t.Errorf("the %s is not done after Stop", name)
		}
		if err := c.Close(); err != nil {
			t.Errorf("the %s closed again: %v", name, err)
		}
	}
}
