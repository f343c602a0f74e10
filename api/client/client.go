package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client is a client of one capdir server, sending the owner key with every request
// (public routes ignore it), except a dispatch that presents a capability token
// (DispatchRequest.Token). Safe for concurrent use.
type Client struct {
	base    string
	key     string
	hc      *http.Client
	timeout time.Duration // per request; 0 means none
}

// Option configures a Client.
type Option func(*Client) error

// WithHTTPClient sends requests through hc instead of a new http.Client.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc == nil {
			return errors.New("client: WithHTTPClient(nil)")
		}
		c.hc = hc
		return nil
	}
}

// WithTimeout bounds each request (each page of an Export) to d; 0 means no bound
// beyond the context's.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) error {
		if d < 0 {
			return fmt.Errorf("client: WithTimeout(%v): give a duration of 0 or more", d)
		}
		c.timeout = d
		return nil
	}
}

// New returns a client of the server at baseURL (such as http://127.0.0.1:8080)
// with the owner key ("" for a client that only dispatches with capability tokens).
func New(baseURL, ownerKey string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: the server URL %q must be http:// or https:// and a host, like http://127.0.0.1:8080", baseURL)
	}
	c := &Client{base: strings.TrimRight(baseURL, "/"), key: ownerKey, hc: &http.Client{}}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// BaseURL is the server's base URL, without a trailing slash.
func (c *Client) BaseURL() string { return c.base }

// do sends in (nil for no body) encoded as JSON and decodes a 2xx answer into out
// (nil to discard it). It returns the status.
func (c *Client) do(ctx context.Context, method, path string, in, out any) (int, error) {
	return c.doAs(ctx, "", method, path, in, out)
}

// doAs is do presenting the capability token tok instead of the owner key, when
// tok is not "".
func (c *Client) doAs(ctx context.Context, tok, method, path string, in, out any) (int, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, err
		}
		body = bytes.NewReader(b)
	}
	return c.sendAs(ctx, tok, method, path, "application/json", body, out)
}

// send sends body (nil for none) with contentType and decodes a 2xx answer into
// out: a *json.RawMessage keeps it as sent. Outside 2xx it returns an *Error.
func (c *Client) send(ctx context.Context, method, path, contentType string, body io.Reader, out any) (int, error) {
	return c.sendAs(ctx, "", method, path, contentType, body, out)
}

// sendAs is send presenting the capability token tok (Authorization: Bearer)
// instead of the owner key, when tok is not "".
func (c *Client) sendAs(ctx context.Context, tok, method, path, contentType string, body io.Reader, out any) (int, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return 0, err
	}
	switch {
	case tok != "":
		req.Header.Set("Authorization", "Bearer "+tok)
	case c.key != "":
		req.Header.Set("x-terminal-key", c.key)
	}
	req.Header.Set("accept", "application/json")
	if body != nil && contentType != "" {
		req.Header.Set("content-type", contentType)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, &TransportError{Method: method, Path: path, Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, newError(method, path, resp.StatusCode, raw)
	}
	if out == nil {
		return resp.StatusCode, nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return resp.StatusCode, errors.Join(fmt.Errorf("%s %s: unexpected answer %.200q", method, path, raw), err)
	}
	return resp.StatusCode, nil
}

func newError(method, path string, status int, raw []byte) *Error {
	e := &Error{Method: method, Path: path, Status: status, Body: raw, Message: strings.TrimSpace(string(raw))}
	var msg struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(raw, &msg) == nil && msg.Error != "" {
		e.Message = msg.Error
	}
	return e
}

// rowPath is the path of key's row.
func rowPath(key string) string { return "/api/directory/" + url.PathEscape(key) }
