package projector_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
	"github.com/nats-io/nats.go"
)

// publishPack appends one message on packSubject carrying evs, each on its
// subject, as capdir's packer writes it.
func publishPack(t *testing.T, l *eventlog.Log, packSubject string, subjects []string, evs []wire.Event) {
	t.Helper()
	data := []byte{wire.PackFormat}
	for i, ev := range evs {
		enc, err := wire.Encode(&ev)
		if err != nil {
			t.Fatal(err)
		}
		data = wire.AppendPacked(data, subjects[i], enc)
	}
	if _, err := l.JetStream().PublishMsg(context.Background(), &nats.Msg{Subject: packSubject, Data: data}); err != nil {
		t.Fatal(err)
	}
}

// A pack's events are folded one by one, as if each were appended alone: its
// requests pending until their receipts, its receipts each stored, counted in
// the ledger and listed under their key in log order (two of one key in one
// pack included); a pack that is not one, or an event a pack may not carry, is
// skipped, and the pack's other events folded. A live fold whose batches are
// smaller than a pack gives the digest a replay gives.
func TestPacksFoldEventByEvent(t *testing.T) {
	l := logtest.Open(t, "")
	ev := func(typ string, data any) wire.Event {
		e, err := wire.NewEvent(time.Now(), typ, "engine:n", data)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	keys := []string{"A", "B", "A", "C"}
	var reqs, rcpts []wire.Event
	var reqSubjects, rcptSubjects []string
	for i, k := range keys {
		inv := fmt.Sprintf("inv_pack%d", i)
		reqs = append(reqs, ev(wire.TypeInvocationRequested, wire.InvocationRequest{InvocationID: inv, Key: k, Body: fmt.Sprint(i)}))
		reqSubjects = append(reqSubjects, wire.RequestSubject(k))
		rcpts = append(rcpts, ev(wire.TypeReceipt, wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: inv, Key: k, OK: true, Ran: true,
			Status: wire.StatusProvenMaterialResult, FinishedAt: time.Now()}, Result: fmt.Sprint(i), BreakerKind: "not_counted"}))
		rcptSubjects = append(rcptSubjects, wire.ReceiptSubject(k))
	}
	publishPack(t, l, wire.RequestPackSubject, reqSubjects, reqs)
	publishPack(t, l, wire.ReceiptPackSubject, rcptSubjects[:3], rcpts[:3])
	// A receipt in a pack of requests, beside a request that is one: the
	// receipt is skipped, the request folded.
	stray := ev(wire.TypeInvocationRequested, wire.InvocationRequest{InvocationID: "inv_stray", Key: "C", Body: "s"})
	publishPack(t, l, wire.RequestPackSubject, []string{wire.ReceiptSubject("C"), wire.RequestSubject("C")}, []wire.Event{rcpts[3], stray})
	if _, err := l.JetStream().Publish(context.Background(), wire.ReceiptPackSubject, []byte("not a pack")); err != nil {
		t.Fatal(err)
	}
	appendEv(t, l, wire.ReceiptSubject("C"), time.Now(), wire.TypeReceipt, wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: "inv_pack3", Key: "C", OK: true,
		Ran: true, Status: wire.StatusProvenMaterialResult, FinishedAt: time.Now()}, Result: "3", BreakerKind: "not_counted"})

	p, err := projector.Open(projector.Config{Path: filepath.Join(t.TempDir(), "p.db"), Log: l, Settings: projector.Settings{BatchSize: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := runUntil(t, p, l); err != nil {
		t.Fatal(err)
	}
	for i := range keys {
		inv := fmt.Sprintf("inv_pack%d", i)
		rc, _, err := p.Receipt(inv)
		if err != nil || rc.Result != fmt.Sprint(i) {
			t.Fatalf("%s: %+v, %v", inv, rc, err)
		}
	}
	if _, pending, err := p.Receipt("inv_stray"); !pending || err == nil {
		t.Fatalf("the request beside a stray receipt: pending %v, %v; want pending", pending, err)
	}
	byA, err := p.ReceiptsByKey("A", 10)
	if err != nil || len(byA) != 2 || byA[0].InvocationID != "inv_pack2" || byA[1].InvocationID != "inv_pack0" {
		t.Fatalf("receipts of A: %+v, %v; want inv_pack2 then inv_pack0", byA, err)
	}
	if th, err := p.LedgerHead(); err != nil || th.Size != 4 {
		t.Fatalf("ledger: %+v, %v; want 4 leaves", th, err)
	}
	assertReplayDigest(t, l, p)
}
