package ledger

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// DefaultOrigin names a node's log in its checkpoints, and its key, when the
// operator names none.
const DefaultOrigin = "capdir"

// Dir is where a node keeps its ledger key and latest checkpoint, under its data dir.
func Dir(dataDir string) string { return filepath.Join(dataDir, "ledger") }

// KeyPath is the node's private key file under its data dir.
func KeyPath(dataDir string) string { return filepath.Join(Dir(dataDir), "key") }

// CheckpointPath is the node's latest signed checkpoint under its data dir.
func CheckpointPath(dataDir string) string { return filepath.Join(Dir(dataDir), "checkpoint") }

// Key is a node's Ed25519 signing key for checkpoints.
type Key struct {
	signer   note.Signer
	verifier string // the note verifier key: name+hash+base64(0x01 || public key)
}

// LoadKey reads the node's key under dataDir, creating it (mode 0600, its
// directory 0700) the first time, named origin. A key file an operator did not
// make with capdir is refused with what is wrong.
func LoadKey(dataDir, origin string) (*Key, error) {
	path := KeyPath(dataDir)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return createKey(path, origin, rand.Reader)
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: read key: %w", err)
	}
	return parseKey(path, strings.TrimSpace(string(b)))
}

func createKey(path, origin string, r io.Reader) (*Key, error) {
	if origin == "" {
		origin = DefaultOrigin
	}
	skey, _, err := note.GenerateKey(r, origin)
	if err != nil {
		return nil, fmt.Errorf("ledger: the origin %q cannot name a key (no spaces or '+'): %w", origin, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("ledger: create key: %w", err)
	}
	_, err = f.WriteString(skey + "\n")
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("ledger: write key: %w", err)
	}
	return parseKey(path, skey)
}

func parseKey(path, skey string) (*Key, error) {
	s, err := note.NewSigner(skey)
	if err != nil {
		return nil, fmt.Errorf("ledger: %s is not a capdir ledger key (%v): move it aside and start the node again to make a new one", path, err)
	}
	// PRIVATE+KEY+<name>+<hash>+<base64(0x01 || seed)>: the verifier key is the
	// same name and hash with the public half.
	parts := strings.SplitN(skey, "+", 5) // base64 holds + too
	seed, err := base64.StdEncoding.DecodeString(parts[len(parts)-1])
	if err != nil || len(seed) != 33 {
		return nil, fmt.Errorf("ledger: %s is not a capdir ledger key: move it aside and start the node again to make a new one", path)
	}
	vkey, err := note.NewEd25519VerifierKey(s.Name(), ed25519Public(seed[1:]))
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	return &Key{signer: s, verifier: vkey}, nil
}

// Name is the key's name, which its checkpoints' signature lines carry.
func (k *Key) Name() string { return k.signer.Name() }

// VerifierKey is the key's public half as a note verifier key
// (name+hash+base64), what capdir verify --keys takes.
func (k *Key) VerifierKey() string { return k.verifier }

// Sign signs c.
func (k *Key) Sign(c Checkpoint) ([]byte, error) { return sign(c, k.signer) }

// KeyInfo is one public key as /.well-known/capdir-keys lists it.
type KeyInfo struct {
	Name      string `json:"name"`
	Verifier  string `json:"verifier"`   // the note verifier key
	Algorithm string `json:"algorithm"`  // "ed25519"
	PublicKey string `json:"public_key"` // the raw 32-byte key, base64
	// Origin is the log origin of the node that announced the key; absent for the
	// answering node's own key, whose origin is the document's.
	Origin string `json:"origin,omitempty"`
}

// Keys is the document /.well-known/capdir-keys serves: the answering node's
// key first, then the keys the other nodes of its log announced (KeysOf).
type Keys struct {
	Origin string    `json:"origin"`
	Keys   []KeyInfo `json:"keys"`
}

// Info is the key as Keys lists it.
func (k *Key) Info() KeyInfo {
	info, _ := verifierInfo(k.verifier) // parseKey made it
	return info
}

// verifierInfo is the note verifier key vkey as Keys lists it.
func verifierInfo(vkey string) (KeyInfo, error) {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return KeyInfo{}, err
	}
	parts := strings.SplitN(vkey, "+", 3)
	raw, _ := base64.StdEncoding.DecodeString(parts[len(parts)-1])
	if len(raw) > 0 {
		raw = raw[1:]
	}
	return KeyInfo{Name: v.Name(), Verifier: vkey, Algorithm: "ed25519", PublicKey: base64.StdEncoding.EncodeToString(raw)}, nil
}

// ParseKeys reads public keys: the JSON document of /.well-known/capdir-keys, or
// note verifier keys one a line ('#' starts a comment). ErrKeys when it holds none.
func ParseKeys(b []byte) (note.Verifiers, error) {
	var list []note.Verifier
	add := func(vkey string) error {
		v, err := note.NewVerifier(vkey)
		if err != nil {
			return notAVerifierKey(vkey, err)
		}
		list = append(list, v)
		return nil
	}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		var doc Keys
		if err := json.Unmarshal(t, &doc); err != nil {
			return nil, fmt.Errorf("%w: the keys document is not JSON of /.well-known/capdir-keys: %v", ErrKeys, err)
		}
		for _, k := range doc.Keys {
			if err := add(k.Verifier); err != nil {
				return nil, err
			}
		}
	} else {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if err := add(line); err != nil {
				return nil, err
			}
		}
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("%w: give the keys of /.well-known/capdir-keys (the JSON document, or a verifier key a line)", ErrKeys)
	}
	return note.VerifierList(list...), nil
}

func ed25519Public(seed []byte) ed25519.PublicKey {
	return ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
}
