package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"
)

// Breakers lists the breakers refusing calls now, by key (GET /api/breaker).
func (c *Client) Breakers(ctx context.Context) ([]Breaker, error) {
	var out struct {
		Breakers []Breaker `json:"breakers"`
	}
	_, err := c.do(ctx, http.MethodGet, "/api/breaker", nil, &out)
	return out.Breakers, err
}

// Breaker is one key's breaker, open or not.
func (c *Client) Breaker(ctx context.Context, key string) (Breaker, error) {
	var b Breaker
	_, err := c.do(ctx, http.MethodGet, "/api/breaker/"+url.PathEscape(key), nil, &b)
	return b, err
}

// ResetBreaker closes key's breaker now (an owner BREAKER_RESET). A key with
// neither a row nor a breaker is an *Error with Status 404.
func (c *Client) ResetBreaker(ctx context.Context, key string) error {
	var out struct {
		OK    bool `json:"ok"`
		Reset bool `json:"reset"`
	}
	if _, err := c.do(ctx, http.MethodDelete, "/api/breaker/"+url.PathEscape(key), nil, &out); err != nil {
		return err
	}
	if !out.OK || !out.Reset {
		return errors.New("the server did not confirm the reset of " + key)
	}
	return nil
}
