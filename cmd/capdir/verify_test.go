package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/projector/ledger"
	"github.com/cespare/xxhash/v2"
	bolt "go.etcd.io/bbolt"
)

// ledgerDir is a data dir a stopped node left: receipts of verifyCalls calls to
// GREET (the i-th call's result is "Hello, caller i!"), a checkpoint of all of
// them, and the node's public keys in keys.
type ledgerDir struct {
	dir, keys string
	ids       []string
	public    string // the public receipt of ids[2], as GET /receipt/{id} answered it
}

const verifyCalls = 12

func writeLedgerDir(t *testing.T) ledgerDir {
	t.Helper()
	d := ledgerDir{dir: t.TempDir()}
	n := nodetest.Start(t, func(c *capdir.Config) { c.Log.DataDir = d.dir })
	row := `{"key":"GREET","type":"fn","target":"echo","content":"# WHAT: echo\n[\"Hello, $1!\"]"}`
	if code, out := nodetest.Do(t, n, "POST", "/api/directory", row); code != 201 {
		t.Fatalf("POST row: %d %s", code, out)
	}
	for i := range verifyCalls {
		code, out := nodetest.Do(t, n, "POST", "/api/dispatch", fmt.Sprintf(`{"key":"GREET","body":"caller %d"}`, i))
		var a struct {
			Proof struct {
				InvocationID string `json:"invocation_id"`
			} `json:"proof"`
		}
		if code != 200 || json.Unmarshal([]byte(out), &a) != nil {
			t.Fatalf("dispatch: %d %s", code, out)
		}
		d.ids = append(d.ids, a.Proof.InvocationID)
	}
	if code, out := nodetest.Do(t, n, "POST", "/api/ledger/checkpoint", ""); code != 200 {
		t.Fatalf("POST checkpoint: %d %s", code, out)
	}
	_, keys := nodetest.DoKey(t, n, "GET", "/.well-known/capdir-keys", "", "")
	d.keys = filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(d.keys, []byte(keys), 0o644); err != nil {
		t.Fatal(err)
	}
	code, pub := nodetest.DoKey(t, n, "GET", "/receipt/"+d.ids[2], "", "")
	if code != 200 {
		t.Fatalf("GET /receipt: %d %s", code, pub)
	}
	d.public = pub
	nodetest.CheckReplay(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := n.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d ledgerDir) verify(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, _, err := runCLI(t, "", append([]string{"verify", "--keys", d.keys, "--data", d.dir}, args...)...)
	return out, err
}

// rewriteReceipt changes one byte of invocation inv's receipt in the projection
// file; with resum, it writes the value's checksum again, as someone who knows the
// file's format would, so only the ledger can tell.
func rewriteReceipt(t *testing.T, dir, inv string, resum bool) {
	t.Helper()
	rewriteReceiptIn(t, capdir.ProjectionPath(dir), inv, resum)
}

func rewriteReceiptIn(t *testing.T, path, inv string, resum bool) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("receipts"))
		v := bytes.Clone(b.Get([]byte(inv)))
		at := bytes.Index(v, []byte("Hello"))
		if at < 0 {
			return fmt.Errorf("receipt %s holds no result: %s", inv, v)
		}
		v[at] = 'J'
		if resum {
			n := len(v) - 8
			d := xxhash.New()
			d.Write([]byte(inv))
			d.Write(v[:n])
			binary.BigEndian.PutUint64(v[n:], d.Sum64())
		}
		return b.Put([]byte(inv), v)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// flipInLog changes one byte of the stored log where it holds needle, in the
// embedded server's message files.
func flipInLog(t *testing.T, dir, needle string) {
	t.Helper()
	found := 0
	err := filepath.WalkDir(eventlog.StoreDir(dir), func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".blk") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if at := bytes.Index(b, []byte(needle)); at >= 0 {
			b[at] = 'J'
			found++
			return os.WriteFile(path, b, 0o600)
		}
		return nil
	})
	if err != nil || found != 1 {
		t.Fatalf("flip %q in the log: found in %d files, %v", needle, found, err)
	}
}

// An untouched data dir verifies whole, by invocation and by range.
func TestVerifyDataDir(t *testing.T) {
	d := writeLedgerDir(t)
	out, err := d.verify(t)
	if err != nil || !strings.Contains(out, fmt.Sprintf("verified %d receipts against the checkpoint of %d receipts", verifyCalls, verifyCalls)) {
		t.Fatalf("verify: %s %v", out, err)
	}
	if out, err := d.verify(t, "--invocation", d.ids[4]); err != nil || !strings.Contains(out, "verified 1 receipts") {
		t.Fatalf("verify --invocation: %s %v", out, err)
	}
	if out, err := d.verify(t, "--from", "3", "--to", "7"); err != nil || !strings.Contains(out, "verified 4 receipts") {
		t.Fatalf("verify --from 3 --to 7: %s %v", out, err)
	}
	if _, err := d.verify(t, "--invocation", "01NOTANINVOCATION"); err == nil || !strings.Contains(err.Error(), "no receipt of invocation") {
		t.Fatalf("verify an unknown invocation: %v", err)
	}
	if _, err := d.verify(t, "--from", "5", "--to", "2"); err == nil || !strings.Contains(err.Error(), "--from (5)") {
		t.Fatalf("verify a reversed range: %v", err)
	}
}

// A byte changed in one receipt of the projection, with its checksum written
// again or not, is named by capdir verify; receipts before it still verify.
func TestVerifyNamesAReceiptChangedInTheProjection(t *testing.T) {
	for _, resum := range []bool{true, false} {
		t.Run(fmt.Sprintf("resum=%v", resum), func(t *testing.T) {
			d := writeLedgerDir(t)
			rewriteReceipt(t, d.dir, d.ids[7], resum)
			_, err := d.verify(t)
			want := "the projection's copy does not hash to the leaf the signed checkpoint holds"
			if !resum {
				want = "the projection's copy cannot be read"
			}
			if err == nil || !strings.Contains(err.Error(), "receipt "+d.ids[7]+" (leaf 7) does not verify: "+want) {
				t.Fatalf("verify: %v; want receipt %s named", err, d.ids[7])
			}
			if out, err := d.verify(t, "--to", "7"); err != nil {
				t.Fatalf("verify the receipts before it: %s %v", out, err)
			}
		})
	}
}

// A byte changed in one receipt event in the stored log is named by capdir
// verify, as the log's copy of it.
func TestVerifyNamesAReceiptChangedInTheLog(t *testing.T) {
	d := writeLedgerDir(t)
	flipInLog(t, d.dir, "Hello, caller 5!")
	_, err := d.verify(t)
	if err == nil || !strings.Contains(err.Error(), "receipt "+d.ids[5]+" (leaf 5) does not verify: the log's copy does not hash") {
		t.Fatalf("verify: %v; want receipt %s named", err, d.ids[5])
	}
}

// A checkpoint is checked against the keys given: signed by another key (a
// stranger's, or a changed checkpoint) it is refused before any receipt is read.
func TestVerifyRefusesACheckpointOfAnotherKey(t *testing.T) {
	d := writeLedgerDir(t)
	other, err := ledger.LoadKey(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	strangers := filepath.Join(t.TempDir(), "keys.txt")
	os.WriteFile(strangers, []byte(other.VerifierKey()+"\n"), 0o644)
	_, _, err = runCLI(t, "", "verify", "--keys", strangers, "--data", d.dir)
	if err == nil || !strings.Contains(err.Error(), "not signed by any of the public keys given") {
		t.Fatalf("verify with a stranger's key: %v", err)
	}
	forged := filepath.Join(t.TempDir(), "checkpoint")
	cp, _ := os.ReadFile(ledger.CheckpointPath(d.dir))
	os.WriteFile(forged, bytes.Replace(cp, []byte(fmt.Sprintf("\n%d\n", verifyCalls)), []byte("\n3\n"), 1), 0o644)
	if _, err := d.verify(t, "--checkpoint", forged); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Fatalf("verify against a changed checkpoint: %v", err)
	}
	signed, _ := other.Sign(ledger.Checkpoint{Origin: "capdir", Size: 1})
	os.WriteFile(forged, signed, 0o644)
	if _, err := d.verify(t, "--checkpoint", forged); err == nil || !strings.Contains(err.Error(), "not signed by any of the public keys given") {
		t.Fatalf("verify against a stranger's checkpoint: %v", err)
	}
	for _, bad := range []string{"", "not a key\n", "{}"} {
		os.WriteFile(strangers, []byte(bad), 0o644)
		if _, _, err := runCLI(t, "", "verify", "--keys", strangers, "--data", d.dir); err == nil || !strings.Contains(err.Error(), "ledger: no public key") {
			t.Fatalf("verify with keys %q: %v", bad, err)
		}
	}
}

// A public receipt checks offline against its node's key: its checkpoint's
// signature and its inclusion proof. A changed leaf hash, or another key, fails.
func TestVerifyPublicReceipt(t *testing.T) {
	d := writeLedgerDir(t)
	file := filepath.Join(t.TempDir(), "receipt.json")
	os.WriteFile(file, []byte(d.public), 0o644)
	out, _, err := runCLI(t, "", "verify", "--keys", d.keys, "--receipt", file)
	if err != nil || !strings.Contains(out, "receipt "+d.ids[2]+": leaf 2 (hash ") || !strings.Contains(out, fmt.Sprintf("in the signed tree of %d receipts", verifyCalls)) {
		t.Fatalf("verify --receipt: %s %v", out, err)
	}
	var m map[string]any
	json.Unmarshal([]byte(d.public), &m)
	led := m["ledger"].(map[string]any)
	led["leaf_hash"] = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	changed, _ := json.Marshal(m)
	os.WriteFile(file, changed, 0o644)
	if _, _, err := runCLI(t, "", "verify", "--keys", d.keys, "--receipt", file); err == nil || !strings.Contains(err.Error(), "receipt "+d.ids[2]+" does not verify") {
		t.Fatalf("verify a receipt with another leaf hash: %v", err)
	}
	other, _ := ledger.LoadKey(t.TempDir(), "")
	strangers := filepath.Join(t.TempDir(), "keys.txt")
	os.WriteFile(strangers, []byte(other.VerifierKey()+"\n"), 0o644)
	os.WriteFile(file, []byte(d.public), 0o644)
	if _, _, err := runCLI(t, "", "verify", "--keys", strangers, "--receipt", file); err == nil || !strings.Contains(err.Error(), "not signed by any of the public keys given") {
		t.Fatalf("verify a receipt with a stranger's key: %v", err)
	}
	os.WriteFile(file, []byte(`{"error":"not_found"}`), 0o644)
	if _, _, err := runCLI(t, "", "verify", "--keys", d.keys, "--receipt", file); err == nil || !strings.Contains(err.Error(), "is not a public receipt") {
		t.Fatalf("verify a file that is no receipt: %v", err)
	}
}

// A receipt no checkpoint covers yet (written after the last one), or a range
// that begins past the checkpoint, is refused saying to sign a newer checkpoint:
// "verified 0 receipts" with a zero exit would pass for a check of it, for a
// receipt appended after the checkpoint by whoever changed the data dir too.
func TestVerifyRefusesAReceiptNoCheckpointCovers(t *testing.T) {
	d := ledgerDir{dir: t.TempDir(), keys: filepath.Join(t.TempDir(), "keys.json")}
	n := nodetest.Start(t, func(c *capdir.Config) { c.Log.DataDir = d.dir; c.Ledger.Every = -1 })
	row := `{"key":"GREET","type":"fn","target":"echo","content":"# WHAT: echo\n[\"Hello, $1!\"]"}`
	if code, out := nodetest.Do(t, n, "POST", "/api/directory", row); code != 201 {
		t.Fatalf("POST row: %d %s", code, out)
	}
	for i := range 4 {
		if i == 3 { // the checkpoint holds the first three
			if code, out := nodetest.Do(t, n, "POST", "/api/ledger/checkpoint", ""); code != 200 {
				t.Fatalf("POST checkpoint: %d %s", code, out)
			}
		}
		code, out := nodetest.Do(t, n, "POST", "/api/dispatch", fmt.Sprintf(`{"key":"GREET","body":"caller %d"}`, i))
		var a struct {
			Proof struct {
				InvocationID string `json:"invocation_id"`
			} `json:"proof"`
		}
		if code != 200 || json.Unmarshal([]byte(out), &a) != nil {
			t.Fatalf("dispatch: %d %s", code, out)
		}
		d.ids = append(d.ids, a.Proof.InvocationID)
	}
	_, keys := nodetest.DoKey(t, n, "GET", "/.well-known/capdir-keys", "", "")
	os.WriteFile(d.keys, []byte(keys), 0o644)
	nodetest.CheckReplay(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := n.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if out, err := d.verify(t, "--invocation", d.ids[2]); err != nil || !strings.Contains(out, "verified 1 receipts") {
		t.Fatalf("verify a receipt the checkpoint holds: %s %v", out, err)
	}
	out, err := d.verify(t, "--invocation", d.ids[3])
	if err == nil || !strings.Contains(err.Error(), "receipt "+d.ids[3]+" (leaf 3) is in no checkpoint yet: the checkpoint holds 3 receipts; sign a newer one") {
		t.Fatalf("verify a receipt after the checkpoint: %q %v; want it refused", out, err)
	}
	out, err = d.verify(t, "--from", "50", "--to", "60")
	if err == nil || !strings.Contains(err.Error(), "--from 50 is past the checkpoint, which holds 3 receipts") {
		t.Fatalf("verify a range past the checkpoint: %q %v; want it refused", out, err)
	}
	if out, err := d.verify(t); err != nil || !strings.Contains(out, "verified 3 receipts") || !strings.Contains(out, "1 receipts after it are in no checkpoint yet") {
		t.Fatalf("verify the data dir: %s %v", out, err)
	}
}

// A copy of a projection file (a backup) checks against a checkpoint without a
// log or a data dir; a receipt changed in the copy is named.
func TestVerifyProjectionCopy(t *testing.T) {
	d := writeLedgerDir(t)
	backup := filepath.Join(t.TempDir(), "backup.db")
	b, err := os.ReadFile(capdir.ProjectionPath(d.dir))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(backup, b, 0o600)
	cp := ledger.CheckpointPath(d.dir)
	out, _, err := runCLI(t, "", "verify", "--keys", d.keys, "--projection", backup, "--checkpoint", cp)
	if err != nil || !strings.Contains(out, fmt.Sprintf("verified %d receipts", verifyCalls)) || !strings.Contains(out, "copies: 2") {
		t.Fatalf("verify a copy: %s %v", out, err)
	}
	if _, _, err := runCLI(t, "", "verify", "--keys", d.keys, "--projection", backup); err == nil || !strings.Contains(err.Error(), "--projection needs --checkpoint") {
		t.Fatalf("verify a copy without a checkpoint: %v", err)
	}
	rewriteReceiptIn(t, backup, d.ids[9], true)
	_, _, err = runCLI(t, "", "verify", "--keys", d.keys, "--projection", backup, "--checkpoint", cp)
	if err == nil || !strings.Contains(err.Error(), "receipt "+d.ids[9]+" (leaf 9) does not verify") {
		t.Fatalf("verify a changed copy: %v", err)
	}
}

// A keys file, a public receipt or a checkpoint over 1 MiB is refused unread,
// saying so: whoever handed it over may have made it huge.
func TestVerifyRefusesAHugeFile(t *testing.T) {
	huge := filepath.Join(t.TempDir(), "huge")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil { // sparse: 1 GiB of zeros, no disk
		t.Fatal(err)
	}
	f.Close()
	err = runVerify(context.Background(), verifyConfig{Keys: huge, Out: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "is over 1048576 bytes") {
		t.Fatalf("verify --keys of 1 GiB: %v; want it refused by its size", err)
	}
}
