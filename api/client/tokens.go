package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// MintToken mints a capability token (POST /api/tokens). A request the server
// refuses (no subject, an empty scope, the owner as subject, a pin it cannot
// resolve) is an *Error with Status 400 saying what to fix.
func (c *Client) MintToken(ctx context.Context, req MintRequest) (MintedToken, error) {
	var out MintedToken
	if _, err := c.do(ctx, http.MethodPost, "/api/tokens", req, &out); err != nil {
		return MintedToken{}, err
	}
	if out.Token == "" {
		return MintedToken{}, errors.New("POST /api/tokens: the server sent no token")
	}
	return out, nil
}

// RevokeToken revokes the token whose id is jti (DELETE /api/tokens/{jti}); it
// returns once the server has folded the revocation, after which every node
// refuses the token.
func (c *Client) RevokeToken(ctx context.Context, jti string) error {
	var out struct {
		Revoked bool `json:"revoked"`
	}
	if _, err := c.do(ctx, http.MethodDelete, "/api/tokens/"+url.PathEscape(jti), nil, &out); err != nil {
		return err
	}
	if !out.Revoked {
		return fmt.Errorf("the server did not confirm the revocation of %s", jti)
	}
	return nil
}
