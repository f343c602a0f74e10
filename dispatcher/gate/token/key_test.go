package token

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestLoadOrCreateKeyWritesOwnerOnlyFileAndReloadsIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys", "token.pem")
	k1, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode = %04o, want 0600", st.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	if blk, _ := pem.Decode(b); blk == nil || blk.Type != "PRIVATE KEY" {
		t.Fatalf("key file is not a PKCS #8 PEM block:\n%s", b)
	}
	// A second node loading the same path gets the same key.
	k2, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if k1.ID() != k2.ID() || !k1.Public().Equal(k2.Public()) {
		t.Fatalf("reloaded key differs: %s vs %s", k1.ID(), k2.ID())
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".capdir-key-*")); len(left) != 0 {
		t.Fatalf("temporary files left behind: %v", left)
	}
}

func TestLoadOrCreateKeyConcurrentCreatorsAgree(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token.pem")
	const n = 8
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := LoadOrCreateKey(path)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = k.ID()
		}()
	}
	wg.Wait()
	for _, id := range ids[1:] {
		if id != ids[0] {
			t.Fatalf("concurrent creators ended with different keys: %v", ids)
		}
	}
}

func TestLoadKeyRefusals(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, mode os.FileMode, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // WriteFile's mode is masked by umask
			t.Fatal(err)
		}
		return p
	}
	good := filepath.Join(dir, "good.pem")
	if _, err := LoadOrCreateKey(good); err != nil {
		t.Fatal(err)
	}
	goodPEM, _ := os.ReadFile(good)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	p384DER, _ := x509.MarshalPKCS8PrivateKey(p384)

	cases := []struct {
		name    string
		path    string
		want    error
		wantMsg string
	}{
		{"group readable", write("group.pem", 0o640, goodPEM), ErrKeyFileMode, "chmod 600"},
		{"world readable", write("world.pem", 0o604, goodPEM), ErrKeyFileMode, "mode 0604"},
		{"group writable", write("gw.pem", 0o620, goodPEM), ErrKeyFileMode, "chmod 600"},
		{"not PEM", write("junk.pem", 0o600, []byte("not a key")), ErrBadKey, "no PEM block"},
		{"wrong block", write("cert.pem", 0o600, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1}})), ErrBadKey, "CERTIFICATE"},
		{"P-384", write("p384.pem", 0o600, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p384DER})), ErrBadKey, "P-256"},
		{"directory", dir, ErrBadKey, "not a regular file"},
		{"missing", filepath.Join(dir, "absent.pem"), os.ErrNotExist, "absent.pem"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadKey(tc.path)
			if !errors.Is(err, tc.want) {
				t.Fatalf("LoadKey = %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("error %q does not say %q", err, tc.wantMsg)
			}
		})
	}
	// LoadOrCreateKey refuses a loose file too, rather than replacing it.
	if _, err := LoadOrCreateKey(filepath.Join(dir, "group.pem")); !errors.Is(err, ErrKeyFileMode) {
		t.Fatalf("LoadOrCreateKey on a group-readable file = %v, want ErrKeyFileMode", err)
	}
}

func TestLoadKeyReadsSEC1(t *testing.T) {
	priv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalECPrivateKey(priv)
	p := filepath.Join(t.TempDir(), "sec1.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := LoadKey(p)
	if err != nil {
		t.Fatal(err)
	}
	if !k.Public().Equal(&priv.PublicKey) {
		t.Fatal("loaded a different key")
	}
}

// TestKeyIDIsRFC7638Thumbprint recomputes the thumbprint by the RFC's recipe: the
// required members crv, kty, x, y in lexicographic order, no whitespace, SHA-256,
// base64url without padding.
func TestKeyIDIsRFC7638Thumbprint(t *testing.T) {
	k := mustKey(t)
	pub := k.Public()
	b64 := base64.RawURLEncoding
	x, y := make([]byte, 32), make([]byte, 32)
	pub.X.FillBytes(x)
	pub.Y.FillBytes(y)
	canon := `{"crv":"P-256","kty":"EC","x":"` + b64.EncodeToString(x) + `","y":"` + b64.EncodeToString(y) + `"}`
	sum := sha256.Sum256([]byte(canon))
	if want := b64.EncodeToString(sum[:]); k.ID() != want {
		t.Fatalf("kid = %s, want %s", k.ID(), want)
	}
}

func TestNewKeyRefusesOtherCurves(t *testing.T) {
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if _, err := NewKey(p384); !errors.Is(err, ErrBadKey) {
		t.Fatalf("NewKey(P-384) = %v, want ErrBadKey", err)
	}
	if _, err := NewKey(nil); !errors.Is(err, ErrBadKey) {
		t.Fatalf("NewKey(nil) = %v, want ErrBadKey", err)
	}
}
