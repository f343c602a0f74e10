package projector_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
)

// receiptsJSON is every read of receipts the projection answers, as JSON: by
// invocation, by key, the recent ones, every ledger leaf.
func receiptsJSON(t *testing.T, p *projector.Projector, invs []string) []byte {
	t.Helper()
	var out []any
	for _, inv := range invs {
		rc, _, err := p.Receipt(inv)
		if err != nil {
			t.Fatal(err)
		}
		i, err := p.Invocation(inv)
		if err != nil {
			t.Fatal(err)
		}
		l, err := p.LedgerLeaf(inv)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rc, string(i.Receipt), string(l.Data))
	}
	byKey, err := p.ReceiptsByKey("ROW_00001", 100)
	if err != nil {
		t.Fatal(err)
	}
	recent, err := p.RecentReceipts(0, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(append(out, byKey, recent))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Receipts are stored compactly; a projection whose receipts an older version
// stored as their JSON reads as it did, to the same answers, the same ledger and
// the same digest as its replay, and takes new receipts compactly beside them.
func TestReceiptsStoredCompactlyAndAsJSONReadAlike(t *testing.T) {
	l := logtest.Open(t, "")
	t0 := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	var invs []string
	for i := range 40 {
		key := fmt.Sprintf("ROW_%05d", i%3)
		inv := fmt.Sprintf("inv_%05d", i)
		invs = append(invs, inv)
		at := t0.Add(time.Duration(i) * time.Second)
		appendEv(t, l, wire.RequestSubject(key), at, wire.TypeInvocationRequested, wire.InvocationRequest{InvocationID: inv, Key: key, Body: "x"})
		body := fmt.Sprintf("call %d", i)
		rc := wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: inv, Key: key, OK: true, Ran: true, Status: wire.StatusProvenMaterialResult,
			StartedAt: at, FinishedAt: at.Add(time.Millisecond), Fingerprints: wire.Fingerprints{Input: wire.Fingerprint(body), Output: wire.Fingerprint(body), Contract: wire.Fingerprint(key)}},
			Body: body, Result: body, HMAC: &wire.FingerprintHMAC{Salt: wire.Fingerprint("salt" + body), Input: wire.Fingerprint("i" + body), Output: wire.Fingerprint("o" + body)},
			BreakerKind: "not_counted", Worker: "w"}
		appendEv(t, l, wire.ReceiptSubject(key), at, wire.TypeReceipt, rc)
	}
	path := filepath.Join(t.TempDir(), "p.db")
	p, err := projector.Open(projector.Config{Path: path, Log: l})
	if err != nil {
		t.Fatal(err)
	}
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	want := receiptsJSON(t, p, invs)
	digest, _ := p.Digest()
	head, _ := p.LedgerHead()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	compact, plain, err := projector.StoreReceiptsAsJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	if compact*2 > plain {
		t.Errorf("the receipts are stored in %d bytes, %d as JSON", compact, plain)
	}
	p2, err := projector.Open(projector.Config{Path: path, Log: l})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p2.Close() })
	if got := receiptsJSON(t, p2, invs); !bytes.Equal(got, want) {
		t.Fatalf("receipts stored as JSON read\n%s\nstored compactly\n%s", got, want)
	}
	if got, _ := p2.Digest(); got != digest {
		t.Fatalf("digest %s with the receipts as JSON, %s compact", got, digest)
	}
	if got, _ := p2.LedgerHead(); got != head {
		t.Fatalf("ledger head %+v with the receipts as JSON, %+v compact", got, head)
	}
	appendMix(t, l, 4) // new receipts, stored compactly beside the JSON ones
	if err := runUntil(t, p2, l); err != nil {
		t.Fatal(err)
	}
	assertReplayDigest(t, l, p2)
}
