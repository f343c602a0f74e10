package ledger_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/capdir/capdir/projector/ledger"
)

// A keys file that holds the node's private signing key (the data dir's
// ledger/key given to --keys by mistake) is refused without the key in the
// error: the error says what was given and what to give instead.
func TestParseKeysNeverQuotesAPrivateKey(t *testing.T) {
	dir := t.TempDir()
	if _, err := ledger.LoadKey(dir, "capdir"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(ledger.KeyPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	skey := strings.TrimSpace(string(b))
	secret := strings.SplitN(skey, "+", 5)[4] // PRIVATE+KEY+<name>+<hash>+<base64, which may hold '+'>
	for _, file := range []string{skey, "# a comment\n" + skey + "\n", `{"origin":"capdir","keys":[{"verifier":"` + skey + `"}]}`} {
		_, err := ledger.ParseKeys([]byte(file))
		if !errors.Is(err, ledger.ErrKeys) {
			t.Fatalf("ParseKeys(a private key): %v; want ErrKeys", err)
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), secret[:12]) {
			t.Fatalf("the refusal quotes the private key: %v", err)
		}
		if !strings.Contains(err.Error(), "private signing key") || !strings.Contains(err.Error(), "/.well-known/capdir-keys") {
			t.Fatalf("the refusal does not say what was given and what to give: %v", err)
		}
	}
}

// A line that is no key at all is quoted back, clipped.
func TestParseKeysClipsAHostileLine(t *testing.T) {
	_, err := ledger.ParseKeys([]byte(strings.Repeat("x", 10000)))
	if !errors.Is(err, ledger.ErrKeys) || len(err.Error()) > 400 {
		t.Fatalf("ParseKeys(a long line): %d bytes of error: %.200v", len(err.Error()), err)
	}
}
