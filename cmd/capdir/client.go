package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/capdir/capdir"

	"github.com/spf13/cobra"
)

// serverFlags are the flags of a command that talks to a running capdir server:
// where it is and where the owner key comes from.
type serverFlags struct {
	server  string
	keyFile string
	dataDir string
	timeout time.Duration
	cmd     *cobra.Command
}

// addServerFlags registers --server, --key-file, --data and --timeout on cmd.
func addServerFlags(cmd *cobra.Command, timeout time.Duration) *serverFlags {
	sf := &serverFlags{cmd: cmd}
	f := cmd.Flags()
	f.StringVar(&sf.server, "server", defaultServer(), "base URL of the capdir server ($CAPDIR_SERVER)")
	f.StringVar(&sf.keyFile, "key-file", "", "file holding the owner key (default $CAPDIR_TERMINAL_KEY, else <--data>/terminal.key)")
	f.StringVar(&sf.dataDir, "data", defaultDataDir(), "data directory whose terminal.key to use")
	f.DurationVar(&sf.timeout, "timeout", timeout, "how long one request may take")
	return sf
}

// defaultServer is $CAPDIR_SERVER, else $CAPDIR_URL, else http://127.0.0.1:8080.
func defaultServer() string {
	for _, env := range []string{"CAPDIR_SERVER", "CAPDIR_URL"} {
		if v := os.Getenv(env); v != "" {
			return v
		}
	}
	return "http://127.0.0.1:8080"
}

// client resolves the owner key and returns a client of the server. The key is, in
// order: the file named by --key-file, $CAPDIR_TERMINAL_KEY, <--data>/terminal.key.
func (sf *serverFlags) client() (*apiClient, error) {
	path, source := sf.keyFile, "--key-file "+sf.keyFile
	if path == "" {
		if k := strings.TrimSpace(os.Getenv("CAPDIR_TERMINAL_KEY")); k != "" {
			c := newAPIClient(sf.server, k, sf.timeout)
			c.keySource = "the environment variable CAPDIR_TERMINAL_KEY"
			return c, nil
		}
		path = capdir.KeyPath(sf.dataDir)
		source = path + " (the data dir's key; --data " + sf.dataDir + ")"
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("no owner key: set CAPDIR_TERMINAL_KEY, pass --key-file, or point --data at the server's data dir (%w)", err)
	}
	key := strings.TrimSpace(string(b))
	if key == "" {
		return nil, fmt.Errorf("no owner key: %s is empty", path)
	}
	c := newAPIClient(sf.server, key, sf.timeout)
	c.keySource = source
	return c, nil
}

// apiClient is a small HTTP client of a capdir server's owner routes: a base URL,
// the owner key sent as x-terminal-key, and JSON in and out. Safe for concurrent use.
type apiClient struct {
	base    string
	key     string
	timeout time.Duration // per request; 0 means none
	hc      *http.Client
	// keySource says where key came from, for the message of a 401.
	keySource string
	// token, when set, is a capability token sent as Authorization: Bearer
	// instead of the owner key; tokenSource says where it came from.
	token, tokenSource string
}

func newAPIClient(base, key string, timeout time.Duration) *apiClient {
	return &apiClient{base: strings.TrimRight(base, "/"), key: key, timeout: timeout, hc: &http.Client{}}
}

// apiError is a non-2xx answer. Message is the server's "error" text when it sent
// one, else the body.
type apiError struct {
	Method, Path string
	Status       int
	Message      string
	Body         []byte
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.Path, e.Status, e.Message)
}

// doJSON sends in (nil for no body) encoded as JSON and decodes a 2xx answer into
// out (nil to discard it). A non-2xx answer is an *apiError.
func (c *apiClient) doJSON(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	return c.send(ctx, method, path, "application/json", body, out)
}

// send sends body (nil for none) with contentType and decodes a 2xx answer into
// out (nil to discard it). A non-2xx answer is an *apiError.
func (c *apiClient) send(ctx context.Context, method, path, contentType string, body io.Reader, out any) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	} else {
		req.Header.Set("x-terminal-key", c.key)
	}
	req.Header.Set("accept", "application/json")
	if body != nil {
		req.Header.Set("content-type", contentType)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w (is capdir serve running there? set --server or CAPDIR_SERVER)", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := &apiError{Method: method, Path: path, Status: resp.StatusCode, Body: raw, Message: strings.TrimSpace(string(raw))}
		var msg struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(raw, &msg) == nil && msg.Error != "" {
			e.Message = msg.Error
		}
		if resp.StatusCode == http.StatusUnauthorized {
			e.Message += ": " + c.refused()
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return errors.Join(fmt.Errorf("%s %s: unexpected answer %.200q", method, path, raw), err)
	}
	return nil
}

// refused explains a 401: which credential the server refused and how to give another.
func (c *apiClient) refused() string {
	if c.token != "" {
		return fmt.Sprintf("%s refused the capability token from %s; ask the owner for a valid one (capdir token mint) "+
			"and pass it with --token or CAPDIR_TOKEN", c.base, c.tokenSource)
	}
	return c.refusedKey()
}

// refusedKey explains a 401: which key the server refused and how to give another.
func (c *apiClient) refusedKey() string {
	source := c.keySource
	if source == "" {
		source = "the caller"
	}
	return fmt.Sprintf("%s refused the owner key from %s; give the key that server uses (its CAPDIR_TERMINAL_KEY, "+
		"or terminal.key in its data dir) with CAPDIR_TERMINAL_KEY, --key-file FILE or --data DIR", c.base, source)
}
