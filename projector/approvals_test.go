package projector_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
	"github.com/prometheus/client_golang/prometheus"
	bolt "go.etcd.io/bbolt"
)

// APPROVAL_REQUESTED and APPROVAL_DECIDED are folded into the approvals: the
// first request and the first decision of an invocation stand, events that do not
// hold are skipped, the undecided ones are pending, the decided ones are found by
// their decision time, and a replay gives back the same digest.
func TestApprovalsFolded(t *testing.T) {
	l := logtest.Open(t, "")
	req := func(inv, key string, seq uint64) wire.ApprovalRequested {
		return wire.ApprovalRequested{InvocationID: inv, Key: key, Trace: "t_1", Actor: "token:agent-7", BodyFingerprint: "fp-" + inv,
			RequestSeq: seq, RequestedAt: t0, ExpiresAt: t0.Add(15 * time.Minute)}
	}
	dec := func(inv, d string, at time.Duration) wire.ApprovalDecided {
		return wire.ApprovalDecided{InvocationID: inv, Decision: d, By: wire.OwnerActor, At: t0.Add(at)}
	}
	seqA := appendEv(t, l, wire.ApprovalSubject("inv_a"), t0, wire.TypeApprovalRequested, req("inv_a", "PAY", 7))
	appendEv(t, l, wire.ApprovalSubject("inv_b"), t0, wire.TypeApprovalRequested, req("inv_b", "PAY", 8))
	appendEv(t, l, wire.ApprovalSubject("inv_c"), t0, wire.TypeApprovalRequested, req("inv_c", "PAY", 9))
	appendEv(t, l, wire.ApprovalSubject("inv_d"), t0, wire.TypeApprovalRequested, req("inv_d", "PAY", 10))
	appendEv(t, l, wire.ApprovalSubject("inv_a"), t0, wire.TypeApprovalRequested, req("inv_a", "OTHER", 99)) // a second request: ignored
	appendEv(t, l, wire.ApprovalSubject("inv_a"), t0, wire.TypeApprovalDecided, dec("inv_a", wire.DecisionApprove, 2*time.Minute))
	appendEv(t, l, wire.ApprovalSubject("inv_a"), t0, wire.TypeApprovalDecided, dec("inv_a", wire.DecisionDeny, 3*time.Minute)) // the first stands
	appendEv(t, l, wire.ApprovalSubject("inv_b"), t0, wire.TypeApprovalDecided, dec("inv_b", wire.DecisionDeny, time.Minute))
	appendEv(t, l, wire.ApprovalSubject("inv_c"), t0, wire.TypeApprovalDecided, dec("inv_c", wire.DecisionExpire, 16*time.Minute))
	// Skipped: another invocation's subject, an unknown decision, no request, no
	// key, a decision on a directory subject.
	appendEv(t, l, wire.ApprovalSubject("inv_d"), t0, wire.TypeApprovalDecided, dec("inv_a", wire.DecisionDeny, time.Minute))
	appendEv(t, l, wire.ApprovalSubject("inv_d"), t0, wire.TypeApprovalDecided, dec("inv_d", "maybe", time.Minute))
	appendEv(t, l, wire.ApprovalSubject("inv_e"), t0, wire.TypeApprovalDecided, dec("inv_e", wire.DecisionApprove, time.Minute))
	appendEv(t, l, wire.ApprovalSubject("inv_f"), t0, wire.TypeApprovalRequested, req("inv_f", "", 11))
	appendEv(t, l, "capdir.ctl.dir.PAY", t0, wire.TypeApprovalDecided, dec("inv_d", wire.DecisionApprove, time.Minute))

	reg := prometheus.NewRegistry()
	m, err := projector.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := projector.Open(projector.Config{Path: filepath.Join(t.TempDir(), "p.db"), Log: l, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	a, err := p.Approval("inv_a")
	if err != nil || a.Key != "PAY" || a.RequestSeq != 7 || a.Seq != seqA || a.Decision != wire.DecisionApprove ||
		a.DecidedBy != wire.OwnerActor || !a.DecidedAt.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("inv_a = %+v, %v", a, err)
	}
	if _, err := p.Approval("inv_e"); !errors.Is(err, projector.ErrNotFound) {
		t.Fatalf("a decision without a request made an approval: %v", err)
	}
	if _, err := p.Approval("inv_f"); !errors.Is(err, projector.ErrNotFound) {
		t.Fatalf("a request without a key made an approval: %v", err)
	}
	pending, err := p.PendingApprovals()
	if err != nil || len(pending) != 1 || pending[0].InvocationID != "inv_d" || pending[0].Decided() {
		t.Fatalf("pending = %+v, %v", pending, err)
	}
	if d := pending[0]; d.ExpiredAt(t0.Add(15*time.Minute-time.Nanosecond)) || !d.ExpiredAt(t0.Add(15*time.Minute)) {
		t.Fatal("an undecided approval expires at its expires_at")
	}
	if c, _ := p.Approval("inv_c"); !c.ExpiredAt(t0) {
		t.Fatal("a decided expiry is expired whatever the time")
	}
	decided, err := p.ApprovalsDecidedSince(t0.Add(90 * time.Second))
	if err != nil || len(decided) != 2 || decided[0].InvocationID != "inv_a" || decided[1].InvocationID != "inv_c" {
		t.Fatalf("decided since t0+90s = %+v, %v", decided, err)
	}
	if n := skipped(t, reg, wire.ControlStream, "bad_data") + skipped(t, reg, wire.ControlStream, "key_mismatch") +
		skipped(t, reg, wire.ControlStream, "wrong_subject"); n != 5 {
		t.Fatalf("%v approval events skipped, want 5", n)
	}

	live, err := p.Digest()
	if err != nil {
		t.Fatal(err)
	}
	rebuilt := filepath.Join(t.TempDir(), "rebuilt.db")
	if err := projector.Rebuild(t.Context(), projector.Config{Path: rebuilt, Log: l}, nil); err != nil {
		t.Fatal(err)
	}
	if d, _ := projector.FileDigest(rebuilt); d != live {
		t.Fatalf("replayed digest %s != live %s", d, live)
	}
	bare, err := projector.Open(projector.Config{Path: filepath.Join(t.TempDir(), "bare.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	if d, _ := bare.Digest(); d == live {
		t.Fatal("the digest does not cover the approvals")
	}
}

// A projection file an older version wrote lacks the buckets added since (the
// approvals): its digest is that of the same buckets empty, not a crash.
func TestFileDigestOfAnOlderFile(t *testing.T) {
	old := filepath.Join(t.TempDir(), "old.db")
	db, err := bolt.Open(old, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range []string{"meta", "rows", "dirseq", "invocations", "receipts", "receipts_key", "breakers", "revoked"} {
			if _, err := tx.CreateBucket([]byte(b)); err != nil {
				return err
			}
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	got, err := projector.FileDigest(old)
	if err != nil {
		t.Fatal(err)
	}
	p, err := projector.Open(projector.Config{Path: filepath.Join(t.TempDir(), "new.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if want, _ := p.Digest(); got != want {
		t.Fatalf("older file's digest %s != an empty projection's %s", got, want)
	}
}

// A projection file an older version wrote stores its values without checksums:
// Open adds them, every value reads as it was, and the digest does not change.
func TestOpenAddsChecksumsToAnOlderFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	seq := make([]byte, 8)
	seq[7] = 1
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range []string{"meta", "rows", "dirseq", "invocations", "receipts", "receipts_key", "breakers", "revoked"} {
			if _, err := tx.CreateBucket([]byte(b)); err != nil {
				return err
			}
		}
		return errors.Join(
			tx.Bucket([]byte("meta")).Put([]byte("ckpt/"+wire.ControlStream), seq),
			tx.Bucket([]byte("dirseq")).Put([]byte("GREET"), seq),
			tx.Bucket([]byte("rows")).Put([]byte("GREET"), []byte(`{"key":"GREET","type":"fn","target":"echo","content":"# WHAT: greets\n[\"$1\"]","enabled":1}`)))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	before, err := projector.FileDigest(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := projector.Open(projector.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	row, at, err := p.Row("GREET")
	if err != nil || row.Target != "echo" || at != 1 || p.Applied(wire.ControlStream) != 1 {
		t.Fatalf("row of the older file: %+v at %d (%v), applied %d", row, at, err, p.Applied(wire.ControlStream))
	}
	if d, err := p.Digest(); err != nil || d != before {
		t.Fatalf("digest %s (%v) once checksums are added; %s before", d, err, before)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if d, err := projector.FileDigest(path); err != nil || d != before {
		t.Fatalf("file digest %s (%v) after the close; %s before", d, err, before)
	}
}
