package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/projector"
	"github.com/capdir/capdir/projector/ledger"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const ledgerRow = `{"key":"GREET","type":"fn","target":"echo","content":"# WHAT: echo\n[\"Hello, $1!\"]"}`

// ledgerCalls dispatches GREET n times on node and returns the invocation ids.
func ledgerCalls(t *testing.T, node *capdir.Node, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		code, out := nodetest.Do(t, node, "POST", "/api/dispatch", fmt.Sprintf(`{"key":"GREET","body":"caller %d"}`, i))
		var a idemAnswer
		if code != 200 || json.Unmarshal([]byte(out), &a) != nil || a.Proof.InvocationID == "" {
			t.Fatalf("dispatch: %d %s", code, out)
		}
		ids = append(ids, a.Proof.InvocationID)
	}
	return ids
}

// nodeKeys reads the node's public keys from /.well-known/capdir-keys, keyless.
func nodeKeys(t *testing.T, node *capdir.Node) note.Verifiers {
	t.Helper()
	code, out := nodetest.DoKey(t, node, "GET", "/.well-known/capdir-keys", "", "")
	if code != 200 {
		t.Fatalf("keys: %d %s", code, out)
	}
	vs, err := ledger.ParseKeys([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func nodeKeysText(t *testing.T, node *capdir.Node) string {
	t.Helper()
	_, out := nodetest.DoKey(t, node, "GET", "/.well-known/capdir-keys", "", "")
	return out
}

// signCheckpoint has node sign a checkpoint now and opens it with keys.
func signCheckpoint(t *testing.T, node *capdir.Node, keys note.Verifiers) ledger.Checkpoint {
	t.Helper()
	code, out := nodetest.Do(t, node, "POST", "/api/ledger/checkpoint", "")
	var p ledger.Published
	if code != 200 || json.Unmarshal([]byte(out), &p) != nil {
		t.Fatalf("POST checkpoint: %d %s", code, out)
	}
	cp, err := ledger.OpenCheckpoint([]byte(p.Checkpoint), keys)
	if err != nil || cp.Size != p.TreeSize || cp.Root != p.RootHash {
		t.Fatalf("checkpoint %+v does not open as answered (%+v): %v", cp, p, err)
	}
	return cp
}

// receiptData is the data of every receipt in l's data stream, by invocation id.
func receiptData(t *testing.T, l *eventlog.Log) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	err := l.Read(context.Background(), wire.DataStream, 1, func(s eventlog.Stored) error {
		var rc wire.Receipt
		if s.Type == wire.TypeReceipt && s.DataAs(&rc) == nil && m[rc.InvocationID] == nil {
			m[rc.InvocationID] = append([]byte(nil), s.Data...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A public receipt carries its leaf (the hash of the receipt as the log holds it)
// and an inclusion proof against the latest signed checkpoint, which tlog's own
// CheckRecord accepts with the key from /.well-known/capdir-keys; a later
// checkpoint is proved to extend it (tlog's CheckTree). A receipt newer than the
// latest checkpoint says so until the next one.
func TestLedgerProofsOverHTTP(t *testing.T) {
	n := nodetest.Start(t, nil)
	if code, out := nodetest.Do(t, n, "POST", "/api/directory", ledgerRow); code != 201 {
		t.Fatalf("POST row: %d %s", code, out)
	}
	keys := nodeKeys(t, n)
	dir := n.Config().Log.DataDir
	if st, err := os.Stat(ledger.KeyPath(dir)); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the node's ledger key: %v %v, want a file of mode 0600", st, err)
	}
	if k, err := ledger.LoadKey(dir, ""); err != nil || !strings.Contains(nodeKeysText(t, n), k.VerifierKey()) {
		t.Fatalf("/.well-known/capdir-keys does not serve the data dir's key (%v)", err)
	}
	ids := ledgerCalls(t, n, 7)
	first := signCheckpoint(t, n, keys)
	if first.Size != 7 {
		t.Fatalf("checkpoint of %d receipts, want 7", first.Size)
	}
	data := receiptData(t, n.Log())
	later := ledgerCalls(t, n, 1)[0]
	for _, id := range append(ids, later) {
		code, out := nodetest.DoKey(t, n, "GET", "/receipt/"+id, "", "")
		var pub capdirPublicReceipt
		if code != 200 || json.Unmarshal([]byte(out), &pub) != nil || pub.Ledger == nil {
			t.Fatalf("GET /receipt/%s: %d %s", id, code, out)
		}
		in := pub.Ledger
		if id == later {
			if !in.Pending || in.Checkpoint != "" {
				t.Fatalf("a receipt after the checkpoint: %s", out)
			}
			continue
		}
		if want := tlog.RecordHash(data[id]); in.LeafHash != want {
			t.Fatalf("leaf hash of %s is not the hash of its receipt as the log holds it", id)
		}
		cp, err := ledger.OpenCheckpoint([]byte(in.Checkpoint), keys)
		if err != nil {
			t.Fatal(err)
		}
		if err := tlog.CheckRecord(in.Proof, cp.Size, cp.Root, in.LeafIndex, in.LeafHash); err != nil {
			t.Fatalf("inclusion of %s: %v", id, err)
		}
		if _, err := in.Verify(keys); err != nil {
			t.Fatal(err)
		}
	}
	second := signCheckpoint(t, n, keys)
	code, out := nodetest.DoKey(t, n, "GET", fmt.Sprintf("/api/ledger/consistency?from=%d&to=%d", first.Size, second.Size), "", "")
	var c ledger.Consistency
	if code != 200 || json.Unmarshal([]byte(out), &c) != nil {
		t.Fatalf("consistency: %d %s", code, out)
	}
	if err := tlog.CheckTree(c.Proof, second.Size, second.Root, first.Size, first.Root); err != nil {
		t.Fatalf("consistency %d -> %d: %v", first.Size, second.Size, err)
	}
	if err := c.Between(first, second); err != nil {
		t.Fatal(err)
	}
	code, out = nodetest.DoKey(t, n, "GET", "/api/ledger/checkpoint", "", "")
	var latest ledger.Published
	if code != 200 || json.Unmarshal([]byte(out), &latest) != nil || latest.TreeSize != second.Size {
		t.Fatalf("GET checkpoint: %d %s", code, out)
	}
}

// capdirPublicReceipt is the part of a public receipt the ledger tests read.
type capdirPublicReceipt struct {
	InvocationID string            `json:"invocation_id"`
	Ledger       *ledger.Inclusion `json:"ledger"`
}

// Signing a checkpoint takes the owner key: none, a wrong one and a capability
// token are refused, and nothing is signed. The public routes answer without a
// credential and ignore a wrong one; a consistency query that is missing,
// malformed, reversed, huge or beyond the ledger is refused saying what to send.
func TestLedgerRoutesRefuseHostileInput(t *testing.T) {
	n := nodetest.Start(t, nil)
	if code, out := nodetest.Do(t, n, "POST", "/api/directory", ledgerRow); code != 201 {
		t.Fatalf("POST row: %d %s", code, out)
	}
	ledgerCalls(t, n, 3)
	before, _ := n.Ledger().Latest()
	for _, tc := range []struct {
		name string
		do   func() (int, string)
	}{
		{"no credential", func() (int, string) { return nodetest.DoKey(t, n, "POST", "/api/ledger/checkpoint", "", "") }},
		{"a wrong owner key", func() (int, string) {
			return nodetest.DoKey(t, n, "POST", "/api/ledger/checkpoint", "", "wrong-key-0123456789abc")
		}},
		{"a capability token", func() (int, string) {
			return nodetest.DoToken(t, n, "POST", "/api/ledger/checkpoint", "", busToken(t, n, "agent", "GREET"))
		}},
	} {
		if code, out := tc.do(); code != 401 {
			t.Errorf("POST checkpoint with %s: %d %s, want 401", tc.name, code, out)
		}
	}
	if after, _ := n.Ledger().Latest(); after.Size != before.Size || string(after.Note) != string(before.Note) {
		t.Fatalf("a refused POST signed a checkpoint: %d -> %d", before.Size, after.Size)
	}
	for _, key := range []string{"", "wrong-key-0123456789abc"} {
		for _, path := range []string{"/.well-known/capdir-keys", "/api/ledger/checkpoint", "/api/ledger/consistency?from=1&to=3"} {
			if code, out := nodetest.DoKey(t, n, "GET", path, "", key); code != 200 {
				t.Errorf("GET %s with key %q: %d %s", path, key, code, out)
			}
		}
	}
	huge := strings.Repeat("9", 4096)
	for _, tc := range []struct{ query, want string }{
		{"", "needs ?from=SIZE&to=SIZE"},
		{"from=1", "needs ?from=SIZE&to=SIZE"},
		{"to=2", "needs ?from=SIZE&to=SIZE"},
		{"from=abc&to=2", `from must be a tree size`},
		{"from=0&to=2", `from must be a tree size`},
		{"from=-1&to=2", `from must be a tree size`},
		{"from=01&to=2", `from must be a tree size`},
		{"from=1.5&to=2", `from must be a tree size`},
		{"from=1&to=0x10", `to must be a tree size`},
		{"from=3&to=2", "from (3) must not be larger than to (2)"},
		{"from=1&to=4", "tree size 4 is beyond the ledger: it holds 3 receipts"},
		{"from=1&to=9223372036854775807", "beyond the ledger"},
		{"from=1&to=9223372036854775808", `to must be a tree size`},
		{"from=1&to=" + huge, `to must be a tree size`},
		{"from=" + url.QueryEscape("1\x00") + "&to=2", `from must be a tree size`},
	} {
		code, out := nodetest.DoKey(t, n, "GET", "/api/ledger/consistency?"+tc.query, "", "")
		if code != 400 || !strings.Contains(out, tc.want) || len(out) > 600 {
			t.Errorf("consistency?%.60s: %d %.300s; want 400 saying %q", tc.query, code, out, tc.want)
		}
	}
}

// Three nodes on the sample cluster (three servers, R3 streams), each with its own
// projection and its own key, fold the same receipts into the same tree: the same
// size and root on every node, the ones a fresh replay of the log builds; each
// node announces its key on the log, so every node lists all three keys and each
// node's checkpoint opens with the keys of any node.
func TestLedgerSameTreeHeadsOnThreeNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a three-server cluster; run without -short")
	}
	c := startSampleCluster(t)
	creds := sampleCreds(t, "node")
	nodes := make([]*capdir.Node, len(c.servers))
	for i, s := range c.servers {
		nodes[i] = nodetest.Start(t, func(cfg *capdir.Config) {
			cfg.Log.NATSURL, cfg.Log.Creds, cfg.Log.Replicas = c.urls(i), creds, 3
			cfg.Name, cfg.Dispatch.Workers = "capdir-"+s.name, 2
			if i > 0 {
				cfg.TokenKeyFile = nodes[0].Config().TokenKeyFile
			}
		})
	}
	if code, out := nodetest.Do(t, nodes[0], "POST", "/api/directory", ledgerRow); code != 201 {
		t.Fatalf("POST row: %d %s", code, out)
	}
	for _, n := range nodes {
		if _, _, err := n.Projector().Row("GREET"); err != nil {
			if _, err := n.Projector().SettleKey(context.Background(), "GREET"); err != nil {
				t.Fatal(err)
			}
		}
	}
	for round := range 4 {
		for _, n := range nodes {
			ledgerCalls(t, n, 1+round)
		}
	}
	ctx := context.Background()
	var heads []projector.TreeHead
	for _, n := range nodes {
		if err := nodetest.CatchUp(ctx, n); err != nil {
			t.Fatal(err)
		}
		h, err := n.Projector().LedgerHead()
		if err != nil {
			t.Fatal(err)
		}
		heads = append(heads, h)
	}
	if heads[0].Size != 30 || heads[1] != heads[0] || heads[2] != heads[0] {
		t.Fatalf("tree heads %+v, want one head of 30 receipts", heads)
	}
	path := filepath.Join(t.TempDir(), "replayed.db")
	if err := projector.Rebuild(ctx, projector.Config{Path: path, Log: nodes[1].Log()}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := projector.OpenLedgerFile(path)
	if err != nil {
		t.Fatal(err)
	}
	replayed, err := f.Head()
	f.Close()
	if err != nil || replayed != heads[0] {
		t.Fatalf("the replay's head %+v (%v), the nodes' %+v", replayed, err, heads[0])
	}
	for i, n := range nodes {
		own := nodeKeys(t, n)
		cp := signCheckpoint(t, n, own)
		if cp.Head() != heads[0] {
			t.Fatalf("node %d signed %+v, want %+v", i, cp.Head(), heads[0])
		}
		// Every node announced its key on the log: the keys any node lists open
		// every node's checkpoints.
		signed, _ := n.Ledger().Latest()
		for j, other := range nodes {
			if _, err := ledger.OpenCheckpoint(signed.Note, nodeKeys(t, other)); err != nil {
				t.Fatalf("node %d's checkpoint with node %d's keys: %v", i, j, err)
			}
		}
		var doc ledger.Keys
		if err := json.Unmarshal([]byte(nodeKeysText(t, n)), &doc); err != nil || len(doc.Keys) != len(nodes) || doc.Keys[0].Verifier != n.Ledger().Key().VerifierKey() {
			t.Fatalf("node %d lists keys %+v (%v), want its own then the other two", i, doc.Keys, err)
		}
	}
	// A key signed by none of the nodes is refused still.
	stranger, err := ledger.LoadKey(t.TempDir(), "stranger")
	if err != nil {
		t.Fatal(err)
	}
	forged, err := stranger.Sign(ledger.Checkpoint{Origin: nodes[0].Ledger().Origin(), Size: heads[0].Size, Root: heads[0].Root})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.OpenCheckpoint(forged, nodeKeys(t, nodes[0])); !errors.Is(err, ledger.ErrCheckpoint) {
		t.Fatalf("a checkpoint by another key: %v", err)
	}
}

// On a schedule (LedgerConfig.Every, --checkpoint-every) the node signs the tree
// as it has grown, without being asked; with a negative one it signs only at start
// and when asked.
func TestLedgerCheckpointOnASchedule(t *testing.T) {
	for _, every := range []time.Duration{20 * time.Millisecond, -1} {
		n := nodetest.Start(t, func(c *capdir.Config) { c.Ledger.Every = every })
		if code, out := nodetest.Do(t, n, "POST", "/api/directory", ledgerRow); code != 201 {
			t.Fatalf("POST row: %d %s", code, out)
		}
		ledgerCalls(t, n, 3)
		if every < 0 {
			time.Sleep(100 * time.Millisecond) // five periods of the scheduled case: none comes
			if latest, _ := n.Ledger().Latest(); latest.Size != 0 {
				t.Fatalf("with no schedule the node signed a checkpoint of %d receipts unasked", latest.Size)
			}
			continue
		}
		deadline := time.Now().Add(10 * time.Second)
		for latest, _ := n.Ledger().Latest(); latest.Size != 3; latest, _ = n.Ledger().Latest() {
			if time.Now().After(deadline) {
				t.Fatalf("no scheduled checkpoint of the 3 receipts; the latest is of %d", latest.Size)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
