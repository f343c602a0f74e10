package capdir

import (
	"crypto/ecdsa"
	"fmt"
	"path/filepath"

	"github.com/capdir/capdir/dispatcher/gate/token"
)

// TokenKeyPath is where a data dir keeps the capability-token signing key unless
// Config.TokenKeyFile names another file.
func TokenKeyPath(dataDir string) string { return filepath.Join(dataDir, "token-signing.pem") }

// TokenAudience is the audience derived from a signing key: "capdir:" and the key
// id (its RFC 7638 thumbprint). Nodes that share the key agree on it, and a token
// minted for another deployment (another key) names another audience.
func TokenAudience(k *token.Key) string { return "capdir:" + k.ID() }

// newTokens loads (or creates, mode 0600) the signing key and builds the node's
// one minter and one verifier (whose cache every request shares).
func newTokens(cfg *Config) (*token.Minter, *token.Verifier, error) {
	path := cfg.TokenKeyFile
	if path == "" {
		path = TokenKeyPath(cfg.Log.DataDir)
	}
	k, err := token.LoadOrCreateKey(path)
	if err != nil {
		return nil, nil, fmt.Errorf("node: capability-token signing key (--token-key): %w", err)
	}
	aud := cfg.TokenAudience
	if aud == "" {
		aud = TokenAudience(k)
	}
	m, err := token.NewMinter(token.MinterConfig{Key: k, Audience: aud})
	if err != nil {
		return nil, nil, fmt.Errorf("node: capability tokens (--token-audience): %w", err)
	}
	v, err := token.NewVerifier(token.VerifierConfig{Keys: []*ecdsa.PublicKey{k.Public()}, Audience: aud})
	if err != nil {
		return nil, nil, fmt.Errorf("node: capability tokens (--token-audience): %w", err)
	}
	cfg.TokenKeyFile, cfg.TokenAudience = path, aud
	return m, v, nil
}
