package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// MintToken mints a capability token for keys through POST /api/tokens, valid for
// ttl (at most the node's maximum, an hour).
func (e *Env) MintToken(ctx context.Context, sub string, ttl time.Duration, keys ...string) (string, error) {
	b, _ := json.Marshal(map[string]any{"sub": sub, "scope": map[string][]string{"keys": keys}, "ttl_seconds": int64(ttl / time.Second)})
	status, out, err := e.Do(ctx, "POST", "/api/tokens", "application/json", b)
	if err != nil {
		return "", err
	}
	var a struct {
		Token string `json:"token"`
	}
	if status != http.StatusCreated || json.Unmarshal(out, &a) != nil || a.Token == "" {
		return "", fmt.Errorf("bench: mint a token: status %d: %s", status, out)
	}
	return a.Token, nil
}

// HTTPInvokeToken is HTTPInvoke presenting tok as Authorization: Bearer instead of
// the owner key.
func (e *Env) HTTPInvokeToken(tok string) Op {
	want := []byte(`"result":"` + EchoBody + `"`)
	b, _ := json.Marshal(map[string]string{"key": EchoKey, "body": EchoBody})
	bearer := "Bearer " + tok
	return func(ctx context.Context, i int) error {
		status, out, err := e.do(ctx, "POST", "/api/dispatch", "application/json", b, "Authorization", bearer)
		if err != nil {
			return err
		}
		if status != http.StatusOK || !bytes.Contains(out, want) {
			return fmt.Errorf("bench: dispatch %d with a token: status %d: %s", i, status, out)
		}
		return nil
	}
}
