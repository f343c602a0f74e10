package client

import (
	"context"
	"net/http"
	"net/url"
)

// Upstream is an upstream MCP server as GET /api/upstreams lists it.
type Upstream struct {
	Name      string `json:"name"`
	Transport string `json:"transport"` // "http" or "stdio"
	URL       string `json:"url,omitempty"`
	Auth      string `json:"auth,omitempty"` // variable names, never values
	From      string `json:"from"`           // "flags" or "registered"
	Seq       uint64 `json:"seq,omitempty"`
}

// Upstreams lists every upstream MCP server the node calls (GET /api/upstreams).
func (c *Client) Upstreams(ctx context.Context) ([]Upstream, error) {
	var out struct {
		Upstreams []Upstream `json:"upstreams"`
	}
	_, err := c.do(ctx, http.MethodGet, "/api/upstreams", nil, &out)
	return out.Upstreams, err
}

// RegisterUpstream registers (or replaces) the streamable HTTP upstream name at
// rawURL, called with auth (a row's auth column form: variable names, never
// values) (PUT /api/upstreams/{name}). changed is false when the same
// registration was there already.
func (c *Client) RegisterUpstream(ctx context.Context, name, rawURL, auth string) (up Upstream, changed bool, err error) {
	in := map[string]string{"url": rawURL}
	if auth != "" {
		in["auth"] = auth
	}
	var out struct {
		Upstream Upstream `json:"upstream"`
		Changed  bool     `json:"changed"`
	}
	_, err = c.do(ctx, http.MethodPut, "/api/upstreams/"+url.PathEscape(name), in, &out)
	return out.Upstream, out.Changed, err
}

// RemoveUpstream removes the registered upstream name (DELETE
// /api/upstreams/{name}); one not registered is an *Error with Status 404.
func (c *Client) RemoveUpstream(ctx context.Context, name string) error {
	_, err := c.do(ctx, http.MethodDelete, "/api/upstreams/"+url.PathEscape(name), nil, nil)
	return err
}
