package command_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"testing"

	"github.com/capdir/capdir/command"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

// side is a command side of its own over cfg (a node's log and projection), as a
// program that embeds capdir may build one, with a minter of its own key.
func side(t *testing.T, cfg command.Config) *command.Side {
	t.Helper()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	key, err := token.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Minter, err = token.NewMinter(token.MinterConfig{Key: key, Audience: "command-test"}); err != nil {
		t.Fatal(err)
	}
	s, err := command.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Minting and revoking without HTTP: "current" pins the one scoped row's
// contract, a request that cannot be minted says what to fix, and a revocation is
// folded when Revoke returns, once.
func TestTokensMintAndRevoke(t *testing.T) {
	n := nodetest.Start(t, nil)
	ctx := context.Background()
	tokens := side(t, command.Config{Log: n.Log(), Projector: n.Projector()}).Tokens()
	res, err := n.Directory().Create(ctx, fields(t, fmt.Sprintf(nodetest.CompliantRow, "PINNED")))
	if err != nil {
		t.Fatal(err)
	}

	ans, err := tokens.Mint(command.MintRequest{Sub: "agent", Scope: token.Scope{Keys: []string{"PINNED"}}, Pin: "current", TTLSeconds: 60})
	if err != nil {
		t.Fatal(err)
	}
	if want := contract.Fingerprint(res.Row); ans.Claims.Pin != want || ans.JTI == "" || ans.Token == "" || ans.JTI != ans.Claims.ID {
		t.Fatalf("minted %+v; want the pin %s", ans.Claims, want)
	}

	for _, tt := range []struct {
		in   command.MintRequest
		want string
	}{
		{command.MintRequest{Sub: "a", Scope: token.Scope{Keys: []string{"PINNED", "OTHER"}}, Pin: "current"}, "give exactly one key in scope.keys"},
		{command.MintRequest{Sub: "a", Scope: token.Scope{Keys: []string{"NOPE"}}, Pin: "current"}, `there is no row "NOPE" whose contract to pin`},
		{command.MintRequest{Sub: "a", Scope: token.Scope{Keys: []string{"PINNED"}}, TTLSeconds: -1}, "ttl_seconds -1 is negative"},
		{command.MintRequest{Sub: "a", Scope: token.Scope{Keys: []string{"PINNED"}}, TTLSeconds: math.MaxInt64}, "ttl over the maximum"},
		{command.MintRequest{Sub: "a", Scope: token.Scope{Keys: []string{"PINNED"}}, Risk: "\x00<script>"}, "risk"},
	} {
		_, err := tokens.Mint(tt.in)
		if !errors.Is(err, command.ErrBadRequest) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("mint %+v: %v; want a bad request saying %q", tt.in, err, tt.want)
		}
	}

	for _, jti := range []string{"", "../x", strings.Repeat("j", wire.MaxTokenIDLen+1), "a b"} {
		if err := tokens.Revoke(ctx, jti); !errors.Is(err, command.ErrBadRequest) || !strings.Contains(err.Error(), "is not a token id") {
			t.Errorf("revoke %q: %v", jti, err)
		}
	}
	before := nodetest.ControlSeq(t, n)
	if err := tokens.Revoke(ctx, ans.JTI); err != nil {
		t.Fatal(err)
	}
	if !n.Projector().Revoked(ans.JTI) {
		t.Fatal("the revocation is not folded when Revoke returns")
	}
	if err := tokens.Revoke(ctx, ans.JTI); err != nil {
		t.Fatal(err)
	}
	if got := nodetest.ControlSeq(t, n); got != before+1 {
		t.Fatalf("two revocations of one token appended %d events; want 1", got-before)
	}
}

// Without an approver every approval command is ErrNoDispatcher; with the
// node's dispatcher an unknown invocation is an *ApprovalError of kind
// dispatcher.ErrApprovalUnknown, and nothing is waiting.
func TestApprovalsWithoutAndWithADispatcher(t *testing.T) {
	n := nodetest.Start(t, nil)
	ctx := context.Background()
	none := side(t, command.Config{Log: n.Log(), Projector: n.Projector()}).Approvals()
	if err := none.Served(); !errors.Is(err, command.ErrNoDispatcher) {
		t.Errorf("Served: %v", err)
	}
	if _, err := none.List(ctx, 10); !errors.Is(err, command.ErrNoDispatcher) {
		t.Errorf("List: %v", err)
	}
	if _, err := none.Get(ctx, "inv_x"); !errors.Is(err, command.ErrNoDispatcher) {
		t.Errorf("Get: %v", err)
	}
	if _, err := none.Decide(ctx, "inv_x", wire.DecisionApprove); !errors.Is(err, command.ErrNoDispatcher) {
		t.Errorf("Decide: %v", err)
	}

	ap := side(t, command.Config{Log: n.Log(), Projector: n.Projector(), Approver: n.Dispatcher()}).Approvals()
	if err := ap.Served(); err != nil {
		t.Errorf("Served: %v", err)
	}
	if list, err := ap.List(ctx, 10); err != nil || len(list) != 0 {
		t.Errorf("List: %v %v", list, err)
	}
	for _, id := range []string{"inv_unknown", "../../x", strings.Repeat("i", 1<<12)} {
		_, err := ap.Get(ctx, id)
		var ae *command.ApprovalError
		if !errors.As(err, &ae) || ae.Inv != id || !errors.Is(err, dispatcher.ErrApprovalUnknown) {
			t.Errorf("Get %.20q: %v", id, err)
		}
		_, err = ap.Decide(ctx, id, wire.DecisionDeny)
		if !errors.As(err, &ae) || ae.Inv != id {
			t.Errorf("Decide %.20q: %v", id, err)
		}
	}
}
