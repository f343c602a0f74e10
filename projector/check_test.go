package projector_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
	"github.com/prometheus/client_golang/prometheus"
)

// secret is put in every field of forged events that may carry one (body, result,
// auth): a skipped event's log line must not repeat it.
const secret = "sk-forged-SECRET-value"

// syncBuffer is a log sink the projector's goroutines and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// take returns what was written since the last take.
func (s *syncBuffer) take() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.b.String()
	s.b.Reset()
	return out
}

// checkStack is a log with the GREET row, one call to it and its receipt, and a
// projector folding it that logs to logs and counts on reg.
type checkStack struct {
	l    *eventlog.Log
	p    *projector.Projector
	reg  *prometheus.Registry
	logs *syncBuffer
	row  contract.Row // GREET as written

	// What a case found before its event: the sequence GREET's writes expected,
	// and GREET's receipts.
	greetSeq, receipts uint64
}

func greetRow() contract.Row {
	return contract.Row{Key: "GREET", Type: contract.TypeFn, Target: "echo", Content: "# WHAT: greet", Enabled: 1,
		UpdatedAt: contract.FormatTime(t0), CreatedAt: contract.FormatTime(t0)}
}

func newCheckStack(t *testing.T) *checkStack {
	t.Helper()
	st := &checkStack{l: logtest.Open(t, ""), reg: prometheus.NewRegistry(), logs: &syncBuffer{}, row: greetRow()}
	m, err := projector.NewMetrics(st.reg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := projector.Open(projector.Config{Path: filepath.Join(t.TempDir(), "p.db"), Log: st.l, Metrics: m,
		Logger: slog.New(slog.NewTextHandler(st.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	st.p = p
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; p.Close() })

	row := st.row
	st.await(t, wire.ControlStream, appendEv(t, st.l, wire.DirectorySubject("GREET"), t0, wire.TypeDirectoryMutate,
		contract.DirectoryMutation{Action: contract.ActionCreate, Key: "GREET", Row: &row}))
	appendEv(t, st.l, wire.RequestSubject("GREET"), t0, wire.TypeInvocationRequested,
		wire.InvocationRequest{InvocationID: "inv_real", Key: "GREET", Body: "Ada"})
	st.await(t, wire.DataStream, appendEv(t, st.l, wire.ReceiptSubject("GREET"), t0, wire.TypeReceipt, receipt("inv_real", "GREET")))
	if n := countSkipped(t, st.reg); n != 0 {
		t.Fatalf("%v events skipped from a log capdir wrote; want none:\n%s", n, st.logs.take())
	}
	return st
}

func receipt(inv, key string) wire.Receipt {
	return wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: inv, Key: key, OK: true, Ran: true,
		Status: wire.StatusProvenMaterialResult, FinishedAt: t0}, Result: secret, Body: secret, BreakerKind: "not_counted"}
}

func (st *checkStack) await(t *testing.T, stream string, seq uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := st.p.WaitFor(ctx, stream, seq); err != nil {
		t.Fatal(err)
	}
}

// greet is GREET as projected, and the sequence a write of it must expect.
func (st *checkStack) greet(t *testing.T) (contract.Row, uint64) {
	t.Helper()
	r, seq, err := st.p.Row("GREET")
	if err != nil {
		t.Fatalf("GREET: %v", err)
	}
	r.RowNum = 0
	return r, seq
}

// skipped is capdir_projector_events_skipped_total{stream,reason} on reg.
func skipped(t *testing.T, reg *prometheus.Registry, stream, reason string) float64 {
	t.Helper()
	return sumSkipped(t, reg, func(s, r string) bool { return s == stream && r == reason })
}

func countSkipped(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	return sumSkipped(t, reg, func(string, string) bool { return true })
}

func sumSkipped(t *testing.T, reg *prometheus.Registry, match func(stream, reason string) bool) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, mf := range families {
		if mf.GetName() != "capdir_projector_events_skipped_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			if match(labels["stream"], labels["reason"]) {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

func mutation(action, key string, row *contract.Row) contract.DirectoryMutation {
	return contract.DirectoryMutation{Action: action, Key: key, Row: row}
}

// rowWith is GREET's row with its key set to key and changed by edit.
func rowWith(key string, edit func(*contract.Row)) *contract.Row {
	r := greetRow()
	r.Key = key
	r.Content = "# WHAT: forged"
	r.Auth = "bearer:" + secret
	if edit != nil {
		edit(&r)
	}
	return &r
}

// forged is one event appended straight to the log, as a client holding a subject
// could append it.
type forged struct {
	name    string
	subject string
	typ     string
	data    any    // the event's data (JSON-encoded), unless raw is set
	raw     string // the whole message, when it is not an envelope
	// reason is the reason label it is skipped with; "" when it is folded.
	reason string
	// check looks at the projection after it; st.row is GREET as it should be.
	check func(t *testing.T, st *checkStack, seq uint64)
}

// greetUnchanged: GREET is the row as written, and its writes expect expect(seq).
func greetUnchanged(expect func(seq, before uint64) uint64) func(*testing.T, *checkStack, uint64) {
	return func(t *testing.T, st *checkStack, seq uint64) {
		t.Helper()
		r, got := st.greet(t)
		if !reflect.DeepEqual(r, st.row) {
			t.Fatalf("GREET changed:\n got %+v\nwant %+v", r, st.row)
		}
		if want := expect(seq, st.greetSeq); got != want {
			t.Fatalf("GREET's writes expect sequence %d, want %d", got, want)
		}
	}
}

// onGreet: the forged event is on GREET's subject, so GREET's next write expects it.
var onGreet = greetUnchanged(func(seq, _ uint64) uint64 { return seq })

// offGreet: the forged event is elsewhere; GREET's next write expects what it did.
var offGreet = greetUnchanged(func(_, before uint64) uint64 { return before })

func noReceipt(inv string, pending bool) func(*testing.T, *checkStack, uint64) {
	return func(t *testing.T, st *checkStack, _ uint64) {
		t.Helper()
		_, gotPending, err := st.p.Receipt(inv)
		if !errors.Is(err, projector.ErrNotFound) || gotPending != pending {
			t.Fatalf("Receipt(%s): pending %v, err %v; want no receipt, pending %v", inv, gotPending, err, pending)
		}
		if n := st.greetReceipts(t); n != st.receipts {
			t.Fatalf("GREET has %d receipts, want the %d it had", n, st.receipts)
		}
		offGreet(t, st, 0)
	}
}

func hasReceipt(inv string) func(*testing.T, *checkStack, uint64) {
	return func(t *testing.T, st *checkStack, _ uint64) {
		t.Helper()
		if _, _, err := st.p.Receipt(inv); err != nil {
			t.Fatalf("Receipt(%s): %v; want it folded", inv, err)
		}
	}
}

func noBreaker(key string) func(*testing.T, *checkStack, uint64) {
	return func(t *testing.T, st *checkStack, _ uint64) {
		t.Helper()
		if ok, err := st.p.HasBreaker(key); ok || err != nil {
			t.Fatalf("HasBreaker(%s) = %v, %v; want no breaker", key, ok, err)
		}
	}
}

// The fold believes nothing because it claims so: every forged event, appended to
// a log holding GREET, one call and its receipt, is skipped with a warning and a
// count, its sequence moves the checkpoint on, and the live projection equals a
// replay after it. Rows that later write rules refuse (a
// sensitive row without a schema, a nats target under capdir., a credential
// variable outside today's allow-list) are folded: those rules are the door's.
func TestFoldTimeChecks(t *testing.T) {
	cases := []forged{
		{name: "mutation on DECOY's subject naming GREET", subject: wire.DirectorySubject("DECOY"), typ: wire.TypeDirectoryMutate,
			data: mutation(contract.ActionReplace, "GREET", rowWith("GREET", nil)), reason: "key_mismatch",
			check: func(t *testing.T, st *checkStack, seq uint64) {
				offGreet(t, st, seq)
				// DECOY's subject holds the event, so DECOY's next write expects it.
				if _, got, err := st.p.Row("DECOY"); !errors.Is(err, projector.ErrNotFound) || got != seq {
					t.Fatalf("DECOY: seq %d, err %v; want ErrNotFound and %d", got, err, seq)
				}
			}},
		{name: "row key is not the subject's", subject: wire.DirectorySubject("GREET"), typ: wire.TypeDirectoryMutate,
			data: mutation(contract.ActionReplace, "GREET", rowWith("DECOY", nil)), reason: "key_mismatch", check: onGreet},
		{name: "mutation without key", subject: wire.DirectorySubject("GREET"), typ: wire.TypeDirectoryMutate,
			data: mutation(contract.ActionDelete, "", nil), reason: "key_mismatch", check: onGreet},
		{name: "row type weird", subject: wire.DirectorySubject("GREET"), typ: wire.TypeDirectoryMutate,
			data:   mutation(contract.ActionReplace, "GREET", rowWith("GREET", func(r *contract.Row) { r.Type = "weird" })),
			reason: "bad_mutation", check: onGreet},
		{name: "action upsert", subject: wire.DirectorySubject("GREET"), typ: wire.TypeDirectoryMutate,
			data: mutation("upsert", "GREET", rowWith("GREET", nil)), reason: "bad_mutation", check: onGreet},
		{name: "create without a row", subject: wire.DirectorySubject("GREET"), typ: wire.TypeDirectoryMutate,
			data: mutation(contract.ActionCreate, "GREET", nil), reason: "bad_mutation", check: onGreet},
		{name: "delete with a row", subject: wire.DirectorySubject("GREET"), typ: wire.TypeDirectoryMutate,
			data: mutation(contract.ActionDelete, "GREET", rowWith("GREET", nil)), reason: "bad_mutation", check: onGreet},
		{name: "mutation data does not decode", subject: wire.DirectorySubject("GREET"), typ: wire.TypeDirectoryMutate,
			data:   map[string]any{"action": "replace", "key": "GREET", "row": map[string]any{"key": "GREET", "type": "fn", "enabled": secret}},
			reason: "bad_data", check: onGreet},
		{name: "not an envelope on GREET's subject", subject: wire.DirectorySubject("GREET"), raw: `{"body":"` + secret + `"`,
			reason: "bad_envelope", check: onGreet},
		{name: "receipt on GREET's directory subject", subject: wire.DirectorySubject("GREET"), typ: wire.TypeReceipt,
			data: receipt("inv_dir", "GREET"), reason: "wrong_subject", check: onGreet},

		{name: "receipt on a request subject", subject: wire.RequestSubject("GREET"), typ: wire.TypeReceipt,
			data: receipt("inv_forged", "GREET"), reason: "wrong_subject", check: noReceipt("inv_forged", false)},
		{name: "receipt on a bus request subject", subject: wire.BusRequestSubject("mallory", "GREET"), typ: wire.TypeReceipt,
			data: receipt("inv_forged_bus", "GREET"), reason: "wrong_subject", check: noReceipt("inv_forged_bus", false)},
		{name: "request on a receipt subject", subject: wire.ReceiptSubject("GREET"), typ: wire.TypeInvocationRequested,
			data: wire.InvocationRequest{InvocationID: "inv_req_on_rcpt", Key: "GREET", Body: secret}, reason: "wrong_subject",
			check: noReceipt("inv_req_on_rcpt", false)},
		{name: "request outside every family", subject: "capdir.data.other.GREET", typ: wire.TypeInvocationRequested,
			data: wire.InvocationRequest{InvocationID: "inv_other", Body: secret}, reason: "wrong_subject",
			check: noReceipt("inv_other", false)},
		{name: "request key is not the subject's", subject: wire.RequestSubject("GREET"), typ: wire.TypeInvocationRequested,
			data: wire.InvocationRequest{InvocationID: "inv_req_other", Key: "DECOY", Body: secret}, reason: "key_mismatch",
			check: noReceipt("inv_req_other", false)},
		{name: "bus request key is not the subject's", subject: wire.BusRequestSubject("mallory", "GREET"), typ: wire.TypeInvocationRequested,
			data: wire.InvocationRequest{InvocationID: "inv_bus_other", Key: "DECOY", Body: secret}, reason: "key_mismatch",
			check: noReceipt("inv_bus_other", false)},
		{name: "bus request with an invocation id the worker refuses", subject: wire.BusRequestSubject("mallory", "GREET"), typ: wire.TypeInvocationRequested,
			data: wire.InvocationRequest{InvocationID: "inv_not.a.token", Body: secret}, reason: "bad_data",
			check: noReceipt("inv_not.a.token", false)},
		{name: "bus request with an overlong invocation id", subject: wire.BusRequestSubject("mallory", "GREET"), typ: wire.TypeInvocationRequested,
			data: wire.InvocationRequest{InvocationID: "inv_" + strings.Repeat("x", wire.MaxChosenIDLen+1), Body: secret}, reason: "bad_data",
			check: noReceipt("inv_"+strings.Repeat("x", wire.MaxChosenIDLen+1), false)},
		{name: "bus request is pending", subject: wire.BusRequestSubject("alice", "GREET"), typ: wire.TypeInvocationRequested,
			data: wire.InvocationRequest{InvocationID: "inv_bus", Body: "Ada"}, check: noReceipt("inv_bus", true)},
		{name: "receipt key is not the subject's", subject: wire.ReceiptSubject("GREET"), typ: wire.TypeReceipt,
			data: receipt("inv_rcpt_other", "DECOY"), reason: "key_mismatch", check: noReceipt("inv_rcpt_other", false)},
		{name: "receipt without invocation id", subject: wire.ReceiptSubject("GREET"), typ: wire.TypeReceipt,
			data: receipt("", "GREET"), reason: "bad_data", check: noReceipt("", false)},
		{name: "receipt in the older layout, another invocation's", subject: "capdir.data.rcpt.GREET.inv_a", typ: wire.TypeReceipt,
			data: receipt("inv_b", "GREET"), reason: "key_mismatch", check: noReceipt("inv_b", false)},
		{name: "receipt in the older layout is folded", subject: "capdir.data.rcpt.GREET.inv_old", typ: wire.TypeReceipt,
			data: receipt("inv_old", "GREET"), check: hasReceipt("inv_old")},
		{name: "reset key is not the subject's", subject: wire.BreakerSubject("GREET"), typ: wire.TypeBreakerReset,
			data: eventlog.BreakerReset{Key: "DECOY"}, reason: "key_mismatch", check: noBreaker("DECOY")},
		{name: "reset on a receipt subject", subject: wire.ReceiptSubject("DECOY"), typ: wire.TypeBreakerReset,
			data: eventlog.BreakerReset{Key: "DECOY"}, reason: "wrong_subject", check: noBreaker("DECOY")},
		{name: "a type this version does not fold", subject: wire.ReceiptSubject("GREET"), typ: "APPROVAL_FORGED",
			data: receipt("inv_approval", "GREET"), reason: "unknown_type", check: noReceipt("inv_approval", false)},
		{name: "not an envelope on a receipt subject", subject: wire.ReceiptSubject("GREET"), raw: "not json " + secret,
			reason: "bad_envelope", check: noReceipt("", false)},

		// Write rules newer than the log are the door's, not the fold's.
		{name: "sensitive row without a schema is folded", subject: wire.DirectorySubject("OLD_SENSITIVE"), typ: wire.TypeDirectoryMutate,
			data: mutation(contract.ActionCreate, "OLD_SENSITIVE", rowWith("OLD_SENSITIVE", func(r *contract.Row) {
				r.Type, r.Target, r.Sensitive, r.Auth = contract.TypeHTTP, "POST https://api.example.com/pay", 1, "bearer:SOME_VAR"
			})), check: rowFolded("OLD_SENSITIVE")},
		{name: "nats target under capdir. is folded", subject: wire.DirectorySubject("OLD_NATS"), typ: wire.TypeDirectoryMutate,
			data: mutation(contract.ActionCreate, "OLD_NATS", rowWith("OLD_NATS", func(r *contract.Row) {
				r.Runner, r.Target, r.Auth = contract.RunnerNATS, "capdir.data.req.GREET", ""
			})), check: rowFolded("OLD_NATS")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := newCheckStack(t)
			stream := wire.DataStream
			if strings.HasPrefix(tc.subject, "capdir.ctl.") {
				stream = wire.ControlStream
			}
			before := skipped(t, st.reg, stream, tc.reason)
			total := countSkipped(t, st.reg)
			_, st.greetSeq = st.greet(t)
			st.receipts = st.greetReceipts(t)
			seq := st.append(t, tc)
			st.await(t, stream, seq) // a skipped event moves the checkpoint on
			logs := st.logs.take()
			if tc.reason == "" {
				if n := countSkipped(t, st.reg); n != total {
					t.Fatalf("folded event counted as skipped (%v -> %v):\n%s", total, n, logs)
				}
			} else {
				if got := skipped(t, st.reg, stream, tc.reason); got != before+1 {
					t.Fatalf("skipped{stream=%s,reason=%s} = %v, want %v; logs:\n%s", stream, tc.reason, got, before+1, logs)
				}
				if n := countSkipped(t, st.reg); n != total+1 {
					t.Fatalf("%v events skipped, want %v", n, total+1)
				}
				if !strings.Contains(logs, "projector: event skipped") || !strings.Contains(logs, "reason="+tc.reason) {
					t.Fatalf("no warning naming reason %s:\n%s", tc.reason, logs)
				}
			}
			if strings.Contains(logs, secret) {
				t.Fatalf("a log line repeats the event's data:\n%s", logs)
			}
			tc.check(t, st, seq)
			assertReplayDigest(t, st.l, st.p)
		})
	}
}

func (st *checkStack) greetReceipts(t *testing.T) uint64 {
	t.Helper()
	rs, err := st.p.ReceiptsByKey("GREET", 100)
	if err != nil {
		t.Fatal(err)
	}
	return uint64(len(rs))
}

func rowFolded(key string) func(*testing.T, *checkStack, uint64) {
	return func(t *testing.T, st *checkStack, _ uint64) {
		t.Helper()
		if _, _, err := st.p.Row(key); err != nil {
			t.Fatalf("Row(%s): %v; want it folded", key, err)
		}
	}
}

func (st *checkStack) append(t *testing.T, tc forged) uint64 {
	t.Helper()
	ctx := context.Background()
	if tc.raw != "" {
		ack, err := st.l.JetStream().Publish(ctx, tc.subject, []byte(tc.raw))
		if err != nil {
			t.Fatal(err)
		}
		return ack.Sequence
	}
	return appendEv(t, st.l, tc.subject, t0, tc.typ, tc.data)
}

// After a forged mutation on GREET's own subject, the owner's writes of GREET still
// go through: the projection expects the forged event's sequence, as JetStream does.
func TestWritesAfterASkippedMutationExpectItsSequence(t *testing.T) {
	st := newCheckStack(t)
	forgedSeq := appendEv(t, st.l, wire.DirectorySubject("GREET"), t0, wire.TypeDirectoryMutate,
		mutation(contract.ActionReplace, "GREET", rowWith("GREET", func(r *contract.Row) { r.Type = "weird" })))
	st.await(t, wire.ControlStream, forgedSeq)
	_, expect := st.greet(t)
	r := greetRow()
	r.Content = "# WHAT: greet again"
	ev, err := wire.NewEvent(t0, wire.TypeDirectoryMutate, "owner", mutation(contract.ActionReplace, "GREET", &r))
	if err != nil {
		t.Fatal(err)
	}
	seq, err := st.l.Append(context.Background(), wire.DirectorySubject("GREET"), ev, eventlog.ExpectLastSubjectSeq(expect))
	if err != nil {
		t.Fatalf("owner's write expecting %d: %v", expect, err)
	}
	st.await(t, wire.ControlStream, seq)
	if got, _ := st.greet(t); got.Content != r.Content {
		t.Fatalf("GREET = %+v, want the owner's write", got)
	}
	assertReplayDigest(t, st.l, st.p)
}
