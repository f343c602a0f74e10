package token

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/capdir/capdir/internal/keyfile"
	jose "github.com/go-jose/go-jose/v4"
)

// Key is a signing key: an ECDSA P-256 private key and its key id, the RFC 7638
// thumbprint (SHA-256, base64url) of its public half.
type Key struct {
	priv *ecdsa.PrivateKey
	id   string
}

// NewKey wraps priv, which must be on P-256.
func NewKey(priv *ecdsa.PrivateKey) (*Key, error) {
	if priv == nil || priv.Curve != elliptic.P256() {
		return nil, ErrBadKey
	}
	id, err := KeyID(&priv.PublicKey)
	if err != nil {
		return nil, err
	}
	return &Key{priv: priv, id: id}, nil
}

// GenerateKey makes a fresh signing key.
func GenerateKey() (*Key, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("token: generate key: %w", err)
	}
	return NewKey(priv)
}

// ID is the key id carried in the "kid" header of every token the key signs.
func (k *Key) ID() string { return k.id }

// Public is the key's public half, for a Verifier.
func (k *Key) Public() *ecdsa.PublicKey { return &k.priv.PublicKey }

// KeyID is the RFC 7638 thumbprint of pub (SHA-256, unpadded base64url).
func KeyID(pub *ecdsa.PublicKey) (string, error) {
	if pub == nil || pub.Curve != elliptic.P256() {
		return "", ErrBadKey
	}
	tp, err := (&jose.JSONWebKey{Key: pub}).Thumbprint(crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadKey, err)
	}
	return base64.RawURLEncoding.EncodeToString(tp), nil
}

// LoadOrCreateKey loads the signing key at path, or, when there is no file there,
// makes one and writes it (PKCS #8 PEM, mode 0600; the directory is made with
// mode 0700 if missing). Nodes that load the same file sign and verify with the
// same key. Two processes creating it at once end with one key: the file appears
// whole (written aside, then linked into place) and the loser loads the winner's.
func LoadOrCreateKey(path string) (*Key, error) {
	k, err := LoadKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	k, err = GenerateKey()
	if err != nil {
		return nil, err
	}
	if err := writeKeyFile(path, k); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return LoadKey(path)
		}
		return nil, err
	}
	return k, nil
}

// maxKeyFile bounds what LoadKey reads: a PEM P-256 key is a few hundred bytes.
const maxKeyFile = 16 << 10

// LoadKey loads the signing key at path. It refuses a file that group or others
// may read or write (ErrKeyFileMode) and a file that holds no P-256 key (ErrBadKey).
func LoadKey(path string) (*Key, error) {
	b, err := keyfile.Read(path, maxKeyFile)
	var mode *keyfile.ModeError
	switch {
	case errors.As(err, &mode):
		return nil, fmt.Errorf("%w: %s has mode %04o; the signing key must be readable by its owner only: chmod 600 %s", ErrKeyFileMode, path, mode.Perm, path)
	case errors.Is(err, keyfile.ErrNotRegular), errors.Is(err, keyfile.ErrTooLarge):
		return nil, fmt.Errorf("%w: %v", ErrBadKey, err)
	case err != nil:
		return nil, fmt.Errorf("token: key file: %w", err)
	}
	return parseKeyPEM(path, b)
}

func parseKeyPEM(path string, b []byte) (*Key, error) {
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("%w: %s holds no PEM block", ErrBadKey, path)
	}
	var priv any
	var err error
	switch blk.Type {
	case "PRIVATE KEY":
		priv, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	case "EC PRIVATE KEY":
		priv, err = x509.ParseECPrivateKey(blk.Bytes)
	default:
		return nil, fmt.Errorf("%w: %s holds a %q PEM block, want PRIVATE KEY", ErrBadKey, path, blk.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadKey, path, err)
	}
	ec, ok := priv.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%w: %s holds a %T", ErrBadKey, path, priv)
	}
	k, err := NewKey(ec)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, path)
	}
	return k, nil
}

// writeKeyFile writes k to a temporary file beside path and links it into place,
// so path never holds a partial key and an existing file is never replaced
// (fs.ErrExist then).
func writeKeyFile(path string, k *Key) error {
	der, err := x509.MarshalPKCS8PrivateKey(k.priv)
	if err != nil {
		return fmt.Errorf("token: encode key: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("token: key directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".capdir-key-*")
	if err != nil {
		return fmt.Errorf("token: key file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("token: key file: %w", err)
	}
	if err := pem.Encode(tmp, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		tmp.Close()
		return fmt.Errorf("token: key file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("token: key file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("token: key file: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		return fmt.Errorf("token: key file: %w", err)
	}
	return nil
}
