package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/capdir/capdir/api/client"
	"github.com/capdir/capdir/internal/nodetest"
)

// The owner mints a token; a client without the owner key dispatches with it, an
// arguments object included, within what it permits; refusals are *client.Error
// with the token statuses; once revoked the token is refused.
func TestClientTokensAndArgs(t *testing.T) {
	n := nodetest.Start(t, nil)
	ctx := context.Background()
	owner, err := client.New(n.URL(), nodetest.Key)
	if err != nil {
		t.Fatal(err)
	}
	schema := `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	for _, row := range []map[string]any{
		{"key": "GREET", "type": "fn", "target": "echo", "content": "# WHAT: greet\n[\"Hello, $1!\"]", "input_schema": schema},
		{"key": "OTHER", "type": "fn", "target": "echo", "content": "# WHAT: other"},
	} {
		if _, err := owner.CreateRow(ctx, row); err != nil {
			t.Fatal(err)
		}
	}
	_, err = owner.MintToken(ctx, client.MintRequest{Sub: "owner", Scope: client.TokenScope{Keys: []string{"GREET"}}})
	apiError(t, "mint for the owner", err, 400, "token: subject may not be the owner")
	tok, err := owner.MintToken(ctx, client.MintRequest{Sub: "agent", Scope: client.TokenScope{Keys: []string{"GREET"}}, TTLSeconds: 120})
	if err != nil || tok.Token == "" || tok.JTI == "" || tok.Exp == 0 || len(tok.Claims) == 0 {
		t.Fatalf("mint: %+v %v", tok, err)
	}

	holder, err := client.New(n.URL(), "") // no owner key: the token only
	if err != nil {
		t.Fatal(err)
	}
	res, err := holder.Dispatch(ctx, client.DispatchRequest{Key: "GREET", Args: json.RawMessage(`{"name":"Ada"}`), Token: tok.Token})
	if err != nil || !res.OK || res.Result != "Hello, Ada!" {
		t.Fatalf("dispatch with the token and an arguments object: %+v %v", res, err)
	}
	_, err = holder.Dispatch(ctx, client.DispatchRequest{Key: "GREET", Args: json.RawMessage(`{"nom":"Ada"}`), Token: tok.Token})
	if e := apiError(t, "arguments the schema refuses", err, 400, ""); !bytes.Contains(e.Body, []byte(`"status":"REFUSED_INPUT"`)) {
		t.Fatalf("400 body %s", e.Body)
	}
	_, err = holder.Dispatch(ctx, client.DispatchRequest{Key: "OTHER", Body: "x", Token: tok.Token})
	apiError(t, "a key outside the scope", err, 403, "scope:OTHER")
	_, err = holder.ListRows(ctx, client.ListOptions{})
	apiError(t, "an owner route without the owner key", err, 401, "unauthorized")

	if err := owner.RevokeToken(ctx, tok.JTI); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	_, err = holder.Dispatch(ctx, client.DispatchRequest{Key: "GREET", Body: "Ada", Token: tok.Token})
	apiError(t, "a revoked token", err, 401, "token:revoked")
	apiError(t, "revoke a malformed id", owner.RevokeToken(ctx, "a.b"), 400, `"a.b" is not a token id`)
}
