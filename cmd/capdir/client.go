package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/api/client"
	"github.com/spf13/cobra"
)

// serverConfig is where a command that talks to a running capdir server finds it
// and the owner key.
type serverConfig struct {
	Server  string        // base URL
	KeyFile string        // file holding the owner key; else $CAPDIR_TERMINAL_KEY, else DataDir's
	DataDir string        // data dir whose terminal.key to use
	Timeout time.Duration // per request; 0 means none
}

// addServerFlags registers --server, --key-file, --data and --timeout on cmd, into sc.
func addServerFlags(cmd *cobra.Command, sc *serverConfig, timeout time.Duration) {
	f := cmd.Flags()
	f.StringVar(&sc.Server, "server", defaultServer(), "base URL of the capdir server ($CAPDIR_SERVER)")
	f.StringVar(&sc.KeyFile, "key-file", "", "file holding the owner key (default $CAPDIR_TERMINAL_KEY, else <--data>/terminal.key)")
	f.StringVar(&sc.DataDir, "data", defaultDataDir(), "data directory whose terminal.key to use")
	f.DurationVar(&sc.Timeout, "timeout", timeout, "how long one request may take")
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

// serverClient is a client of the server with where its owner key came from, for
// the message of a 401.
type serverClient struct {
	*client.Client
	keySource string
	// token, when set, is a capability token sent as Authorization: Bearer
	// instead of the owner key; tokenSource says where it came from.
	token, tokenSource string
}

// client resolves the owner key and returns a client of the server. The key is, in
// order: the file named by KeyFile, $CAPDIR_TERMINAL_KEY, <DataDir>/terminal.key.
func (sc serverConfig) client() (*serverClient, error) {
	key, source, err := sc.ownerKey()
	if err != nil {
		return nil, err
	}
	c, err := client.New(sc.Server, key, client.WithTimeout(sc.Timeout))
	if err != nil {
		return nil, fmt.Errorf("--server: %w", err)
	}
	return &serverClient{Client: c, keySource: source}, nil
}

// tokenClient is a client that presents the capability token tok, else the one in
// $CAPDIR_TOKEN, else (neither set) the owner key as client resolves it.
func (sc serverConfig) tokenClient(tok string) (*serverClient, error) {
	source := "--token"
	if tok = strings.TrimSpace(tok); tok == "" {
		tok, source = strings.TrimSpace(os.Getenv("CAPDIR_TOKEN")), "the environment variable CAPDIR_TOKEN"
	}
	if tok == "" {
		return sc.client()
	}
	c, err := client.New(sc.Server, "", client.WithTimeout(sc.Timeout))
	if err != nil {
		return nil, fmt.Errorf("--server: %w", err)
	}
	return &serverClient{Client: c, token: tok, tokenSource: source}, nil
}

// addTokenFlag registers --token on cmd, into tok: the capability token to call
// with instead of the owner key.
func addTokenFlag(cmd *cobra.Command, tok *string) {
	cmd.Flags().StringVar(tok, "token", "", "call with this capability token instead of the owner key (default $CAPDIR_TOKEN)")
}

// errEmptyToken refuses --token given empty, which would otherwise fall back to
// $CAPDIR_TOKEN or the owner key without a word.
var errEmptyToken = errors.New("--token is empty (an unset variable, or a capdir token mint that failed?): " +
	"give a capability token, or leave --token out to call with $CAPDIR_TOKEN, else the owner key")

// checkTokenFlag is errEmptyToken when cmd's --token was given empty.
func checkTokenFlag(cmd *cobra.Command) error {
	if f := cmd.Flags().Lookup("token"); f != nil && f.Changed && strings.TrimSpace(f.Value.String()) == "" {
		return errEmptyToken
	}
	return nil
}

func (sc serverConfig) ownerKey() (key, source string, err error) {
	path, source := sc.KeyFile, "--key-file "+sc.KeyFile
	if path == "" {
		if k := strings.TrimSpace(os.Getenv("CAPDIR_TERMINAL_KEY")); k != "" {
			return k, "the environment variable CAPDIR_TERMINAL_KEY", nil
		}
		path = capdir.KeyPath(sc.DataDir)
		source = path + " (the data dir's key; --data " + sc.DataDir + ")"
	}
	key, err = capdir.ReadKeyFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", "", fmt.Errorf("no owner key: set CAPDIR_TERMINAL_KEY, pass --key-file, or point --data at the server's data dir (%w)", err)
	case err != nil:
		return "", "", fmt.Errorf("no owner key from %s: %w", source, err)
	}
	return key, source, nil
}

// notFound says err is the server's 404: the name or key it was given is not there.
func notFound(err error) bool {
	var apiErr *client.Error
	return errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound
}

// explain adds what to do to err: on a 401, which key or token the server refused
// and how to give another; when the server could not be reached, where the CLI looked.
func (c *serverClient) explain(err error) error {
	var apiErr *client.Error
	var transport *client.TransportError
	switch {
	case errors.As(err, &apiErr) && apiErr.Status == 401 && c.token != "":
		apiErr.Message += ": " + fmt.Sprintf("%s refused the capability token from %s; ask the owner for a valid one (capdir token mint) "+
			"and pass it with --token or CAPDIR_TOKEN", c.BaseURL(), c.tokenSource)
	case errors.As(err, &apiErr) && apiErr.Status == 401:
		apiErr.Message += ": " + fmt.Sprintf("%s refused the owner key from %s; give the key that server uses (its CAPDIR_TERMINAL_KEY, "+
			"or terminal.key in its data dir) with CAPDIR_TERMINAL_KEY, --key-file FILE or --data DIR", c.BaseURL(), c.keySource)
	case errors.As(err, &transport):
		return fmt.Errorf("%w (is capdir serve running there? set --server or CAPDIR_SERVER)", err)
	}
	return err
}
