package dispatcher_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/fnrunner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/projector"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type stack struct {
	log    *eventlog.Log
	proj   *projector.Projector
	fns    *fnrunner.Registry
	minter *token.Minter
	tokens *token.Verifier
	stop   context.CancelFunc
	done   chan error
}

// newStack runs a real log and projector; services are added by newService.
func newStack(t *testing.T) *stack {
	t.Helper()
	st := stackOn(t, logtest.Open(t, ""))
	fnrunner.RegisterBuiltins(st.fns, fnrunner.BuiltinConfig{Clock: time.Now})
	return st
}

func (st *stack) run(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	st.stop = cancel
	go func() { st.done <- st.proj.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-st.done
		st.proj.Close()
	})
}

func (st *stack) newService(t *testing.T, mutate func(*dispatcher.ServiceConfig)) *dispatcher.Service {
	t.Helper()
	cfg := dispatcher.ServiceConfig{
		Log: st.log, Projector: st.proj, Logger: quiet, Settings: dispatcher.Settings{Workers: 4}, Name: "w",
		Runners: runner.Runners{runner.RunnerFn: fnrunner.New(st.fns)}, Tokens: st.tokens,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := dispatcher.NewService(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (st *stack) putRow(t *testing.T, row contract.Row) {
	t.Helper()
	ev, _ := wire.NewEvent(time.Now(), wire.TypeDirectoryMutate, "test", contract.DirectoryMutation{Action: contract.ActionCreate, Key: row.Key, Row: &row})
	seq, err := st.log.Append(context.Background(), wire.DirectorySubject(row.Key), ev)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := st.proj.WaitFor(ctx, wire.ControlStream, seq); err != nil {
		t.Fatal(err)
	}
}

func fnRow(key, target, content string) contract.Row {
	return contract.Row{Key: key, Type: "fn", Target: target, Content: content, Enabled: 1, PlannerVisible: 1, PlannerRank: 100}
}

func invoke(t *testing.T, s *dispatcher.Service, key, body string) wire.Receipt {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc, err := s.Invoke(ctx, wire.InvocationRequest{Key: key, Body: body, Credential: "owner:terminal-key"})
	if err != nil {
		t.Fatalf("invoke %s: %v", key, err)
	}
	return rc
}

func TestInvokeFnEndToEnd(t *testing.T) {
	st := newStack(t)
	s := st.newService(t, nil)
	st.run(t)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st.putRow(t, fnRow("SAY", "echo", "# WHAT: echo the second argument\n[\"$2\"]"))

	rc := invoke(t, s, "SAY", "a|hello \"world\"")
	if !rc.OK || !rc.Ran || !rc.Material || rc.Result != `hello "world"` || rc.Status != wire.StatusProvenMaterialResult {
		t.Fatalf("receipt = %+v", rc)
	}
	if !strings.HasPrefix(rc.InvocationID, "inv_") || !strings.HasPrefix(rc.Trace, "t_") {
		t.Fatalf("ids = %s %s", rc.InvocationID, rc.Trace)
	}
	if rc.Actor != "owner:terminal-key" || rc.Runner != "fn" || rc.Type != "fn" {
		t.Fatalf("actor/runner/type = %s/%s/%s", rc.Actor, rc.Runner, rc.Type)
	}
	if rc.Fingerprints.Input != dispatcher.Fingerprint("a|hello \"world\"") || rc.Fingerprints.Output != dispatcher.Fingerprint(rc.Result) {
		t.Fatalf("fingerprints = %+v", rc.Fingerprints)
	}
	row, _, _ := st.proj.Row("SAY")
	if rc.Fingerprints.Contract != contract.Fingerprint(&row) {
		t.Fatalf("contract fingerprint = %s, want %s", rc.Fingerprints.Contract, contract.Fingerprint(&row))
	}
	// The receipt is in the log when Invoke returns: the projection has it once
	// it has caught up with the log.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := st.proj.Settle(sctx, wire.DataStream); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.proj.Receipt(rc.InvocationID); err != nil {
		t.Fatalf("receipt not projected: %v", err)
	}
}

func TestUnknownKeyGetsReceiptAndSuggestions(t *testing.T) {
	st := newStack(t)
	s := st.newService(t, nil)
	st.run(t)
	s.Start(context.Background())
	defer s.Close()
	st.putRow(t, fnRow("ZZ_TEST_TEMPERATURE", "echo", "# WHAT: x"))
	rc := invoke(t, s, "ZZ_TEST_TEMPERATUR", "")
	if rc.Status != wire.StatusRefusedUnknownKey || rc.Ran || rc.OK {
		t.Fatalf("receipt = %+v", rc)
	}
	want := `{"attempted":"ZZ_TEST_TEMPERATUR","did_you_mean":["ZZ_TEST_TEMPERATURE"],"error":"unknown_key","ran":false}`
	if rc.Result != want {
		t.Fatalf("result = %s\nwant     %s", rc.Result, want)
	}
}

func TestDisabledRowRefused(t *testing.T) {
	st := newStack(t)
	s := st.newService(t, nil)
	st.run(t)
	s.Start(context.Background())
	defer s.Close()
	r := fnRow("OFF", "echo", "# WHAT: x")
	r.Enabled = 0
	st.putRow(t, r)
	rc := invoke(t, s, "OFF", "x")
	if rc.Status != wire.StatusRefusedDisabled || rc.Result != "ERR:disabled:OFF" {
		t.Fatalf("receipt = %+v", rc)
	}
}

// A bus client invokes over NATS alone (wire.Invoke). It is never the owner: with
// no capability token the gate refuses it and nothing runs; with one, the row runs
// and the receipt names the token's subject.
func TestInvokeOverNATS(t *testing.T) {
	st := newStack(t)
	s := st.newService(t, nil)
	st.run(t)
	s.Start(context.Background())
	defer s.Close()
	st.putRow(t, fnRow("SAY", "echo", "# WHAT: echo"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc := busConn(t, st, "test")
	rc, err := wire.Invoke(ctx, nc, "test", "SAY", "over the bus")
	if err != nil {
		t.Fatal(err)
	}
	if rc.Status != wire.StatusRefusedToken || rc.Result != "token:required" || rc.Ran || rc.Actor != "nats:test" {
		t.Fatalf("receipt without a token = %+v", rc)
	}
	rc, err = wire.Invoke(ctx, nc, "test", "SAY", "over the bus", wire.WithToken(st.mint(t, "billing", "SAY")))
	if err != nil {
		t.Fatal(err)
	}
	if rc.Result != "over the bus" || rc.Actor != "token:billing" || !rc.Material {
		t.Fatalf("receipt with a token = %+v", rc)
	}
}

// mint is a capability token for sub that may invoke keys, from the stack's minter.
func (st *stack) mint(t *testing.T, sub string, keys ...string) string {
	t.Helper()
	tok, _, err := st.minter.Mint(token.MintRequest{Subject: sub, Scope: token.Scope{Keys: keys}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// busConn is a connection playing the bus client named client: the log here has
// no TCP listener, so it is an in-process connection with the client's options.
func busConn(t *testing.T, st *stack, client string) *nats.Conn {
	t.Helper()
	nc, err := st.log.NewConn(wire.ClientOptions(client)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// A request on a bus client's subject is the client's, whatever its body says: a
// body claiming the owner's credential, another actor, or a directory position
// gets a receipt naming the client, and, carrying no capability token, is refused
// (token:required) without running. On capdir's own subject, the credential stands.
func TestBusRequestIsNeverTheOwners(t *testing.T) {
	st := newStack(t)
	s := st.newService(t, nil)
	st.run(t)
	s.Start(context.Background())
	defer s.Close()
	st.putRow(t, fnRow("SAY", "echo", "# WHAT: echo"))
	nc := busConn(t, st, "c1")
	notices := make(chan *nats.Msg, 4)
	sub, err := nc.ChanSubscribe(wire.ReceiptNotices("c1"), notices)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	req := wire.InvocationRequest{Key: "SAY", Body: "hi", Credential: wire.OwnerActor, DirSeq: 1 << 60}
	ev, err := wire.PrepareRequest(time.Now(), &req)
	if err != nil {
		t.Fatal(err)
	}
	ev.Actor = wire.OwnerActor
	data, _ := json.Marshal(ev)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js, _ := jetstream.New(nc)
	start := time.Now()
	if _, err := js.Publish(ctx, wire.BusRequestSubject("c1", "SAY"), data); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-notices:
		var rc wire.Receipt
		got, err := wire.Decode(m.Data)
		if err != nil || got.DataAs(&rc) != nil {
			t.Fatalf("notice %s: %v", m.Data, err)
		}
		if rc.Actor != "nats:c1" || rc.InvocationID != req.InvocationID || m.Subject != wire.ReceiptNoticeSubject("c1", "SAY", req.InvocationID) {
			t.Fatalf("receipt on %s = %+v; want actor nats:c1", m.Subject, rc)
		}
		if rc.Status != wire.StatusRefusedToken || rc.Result != "token:required" || rc.Ran {
			t.Fatalf("a bus request claiming the owner without a token: %+v; want %s token:required, not run", rc, wire.StatusRefusedToken)
		}
		// A directory position far ahead would have held the worker 5 s first.
		if el := time.Since(start); el > 4*time.Second {
			t.Fatalf("the receipt took %v: the worker waited for the directory position the client claimed", el)
		}
	case <-ctx.Done():
		t.Fatal("no receipt notice for the bus request")
	}
	if rc := invoke(t, s, "SAY", "hi"); rc.Actor != wire.OwnerActor || rc.Result != "hi" {
		t.Fatalf("capdir's own request: actor %q, want %q", rc.Actor, wire.OwnerActor)
	}
}

// receiptsFor counts RECEIPT events in the log for one invocation.
func receiptsFor(t *testing.T, l *eventlog.Log, inv string) int {
	t.Helper()
	n := 0
	err := l.Read(context.Background(), wire.DataStream, 1, func(s eventlog.Stored) error {
		var rc wire.Receipt
		if s.Type == wire.TypeReceipt && s.DataAs(&rc) == nil && rc.InvocationID == inv {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

var errCrash = errors.New("crash")

func TestWorkerKilledMidInvocation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		where string
		runs  int32 // how often the function runs in total
	}{
		{"before the receipt", "receipt", 2},
		{"after the receipt, before the ack", "ack", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newStack(t)
			var runs atomic.Int32
			st.fns.Register("count", func(ctx context.Context, args []any) (string, error) {
				runs.Add(1)
				return "counted", nil
			})
			crashed := make(chan struct{})
			crash := func(*wire.InvocationRequest) error {
				select {
				case <-crashed:
				default:
					close(crashed)
				}
				return errCrash
			}
			a := st.newService(t, func(c *dispatcher.ServiceConfig) {
				c.AckWait = 300 * time.Millisecond
				c.Name = "a"
				if tc.where == "receipt" {
					dispatcher.SetFailpoints(c, crash, nil)
				} else {
					dispatcher.SetFailpoints(c, nil, crash)
				}
			})
			st.run(t)
			st.putRow(t, fnRow("COUNT", "count", "# WHAT: count runs"))
			if err := a.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			// Invoke without waiting for the receipt: worker a dies holding it.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			type res struct {
				rc  wire.Receipt
				err error
			}
			got := make(chan res, 1)
			go func() {
				rc, err := a.Invoke(ctx, wire.InvocationRequest{Key: "COUNT", Body: "x", Credential: "owner:terminal-key"})
				got <- res{rc, err}
			}()
			<-crashed
			a.Close() // the crashed worker is gone; its request is unacknowledged

			b := st.newService(t, func(c *dispatcher.ServiceConfig) { c.AckWait = 300 * time.Millisecond; c.Name = "b" })
			if err := b.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			r := <-got
			if r.err != nil {
				t.Fatalf("invoke: %v", r.err)
			}
			// Let any further redelivery play out, then count.
			time.Sleep(900 * time.Millisecond)
			if n := receiptsFor(t, st.log, r.rc.InvocationID); n != 1 {
				t.Fatalf("%d receipts for %s, want exactly 1", n, r.rc.InvocationID)
			}
			if got := runs.Load(); got != tc.runs {
				t.Fatalf("function ran %d times, want %d", got, tc.runs)
			}
			if tc.where == "receipt" && r.rc.Worker != "b" {
				t.Fatalf("receipt written by %q, want the surviving worker b", r.rc.Worker)
			}
		})
	}
}

// A row written through another node is callable at once even when this node's
// projection (and so the request's DirSeq) is behind: the worker that misses the
// row asks the log for the key's last mutation and waits for it.
func TestRowWrittenElsewhereIsCallableAtOnce(t *testing.T) {
	st := newStack(t)
	var lag atomic.Bool
	st.proj.OnApplied(func(stream string, _ []eventlog.Stored) {
		if stream == wire.ControlStream && lag.Load() {
			time.Sleep(300 * time.Millisecond)
		}
	})
	s := st.newService(t, nil)
	st.run(t)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st.putRow(t, fnRow("FIRST", "echo", "# WHAT: first"))

	// Hold the projector up behind another write, then write the row as a node
	// whose projection is ahead of this one would, and invoke it at once.
	lag.Store(true)
	st.putRowNoWait(t, fnRow("OTHER", "echo", "# WHAT: other"))
	time.Sleep(20 * time.Millisecond) // the projector is now sleeping after OTHER
	st.putRowNoWait(t, fnRow("FRESH", "echo", "# WHAT: fresh"))
	if _, _, err := st.proj.Row("FRESH"); err == nil {
		t.Fatal("the projection already has FRESH: the test would prove nothing")
	}
	rc := invoke(t, s, "FRESH", "hello")
	if rc.Status != wire.StatusProvenMaterialResult || rc.Result != "hello" {
		t.Fatalf("receipt = %+v", rc)
	}
}

func (st *stack) putRowNoWait(t *testing.T, row contract.Row) {
	t.Helper()
	ev, _ := wire.NewEvent(time.Now(), wire.TypeDirectoryMutate, "test", contract.DirectoryMutation{Action: contract.ActionCreate, Key: row.Key, Row: &row})
	if _, err := st.log.Append(context.Background(), wire.DirectorySubject(row.Key), ev); err != nil {
		t.Fatal(err)
	}
}

// A receipt appended by another node's worker wakes the caller as soon as the
// caller's node reads it, not when its projection commits the batch: here that
// projection lingers a whole second.
func TestReceiptFromAnotherWorkerWakesBeforeTheCommit(t *testing.T) {
	st := newStack(t) // the worker's node
	worker := st.newService(t, nil)
	st.run(t)
	st.putRow(t, fnRow("SAY", "echo", ""))
	if err := worker.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { worker.Close() })

	// The caller's node: its own projection of the same log, no workers started.
	p, err := projector.Open(projector.Config{Path: filepath.Join(t.TempDir(), "caller.db"), Log: st.log, Logger: quiet, Settings: projector.Settings{Linger: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	caller, err := dispatcher.NewService(dispatcher.ServiceConfig{
		Log: st.log, Projector: p, Logger: quiet, Settings: dispatcher.Settings{Workers: 1}, Name: "caller",
		Runners: runner.Runners{runner.RunnerFn: fnrunner.New(st.fns)}, Tokens: st.tokens,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; p.Close() })
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := p.Settle(wctx, wire.ControlStream); err != nil {
		t.Fatal(err)
	}

	for i := 0; i < 3; i++ {
		start := time.Now()
		rc := invoke(t, caller, "SAY", "hi")
		if el := time.Since(start); el >= time.Second {
			t.Fatalf("call %d took %v: the caller waited for its projection's commit", i, el)
		}
		if rc.Result != "hi" || rc.Worker != "w" {
			t.Fatalf("call %d: result %q from worker %q", i, rc.Result, rc.Worker)
		}
	}
}

// A call that takes longer than AckWait is not redelivered while it runs: the
// worker keeps telling JetStream it is in progress, so it runs once, with one
// receipt, even with a second node's workers waiting for work.
func TestSlowCallIsNotRedeliveredWhileItRuns(t *testing.T) {
	st := newStack(t)
	var runs atomic.Int32
	st.fns.Register("slow", func(ctx context.Context, args []any) (string, error) {
		runs.Add(1)
		select {
		case <-time.After(2500 * time.Millisecond):
		case <-ctx.Done():
		}
		return "done", nil
	})
	// An ack wait of a second, not less: a worker keeps its call in progress
	// every third of it, and a machine loaded by the race detector can stall
	// a goroutine for longer than a third of a shorter one.
	cfg := func(name string) func(*dispatcher.ServiceConfig) {
		return func(c *dispatcher.ServiceConfig) { c.AckWait = time.Second; c.Name = name }
	}
	a, b := st.newService(t, cfg("a")), st.newService(t, cfg("b"))
	st.run(t)
	st.putRow(t, fnRow("SLOW", "slow", "# WHAT: takes two and a half seconds"))
	for _, s := range []*dispatcher.Service{a, b} {
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
	}
	rc := invoke(t, a, "SLOW", "")
	if rc.Result != "done" {
		t.Fatalf("result %q", rc.Result)
	}
	time.Sleep(1500 * time.Millisecond) // room for a redelivery to run
	if n := runs.Load(); n != 1 {
		t.Fatalf("the slow call ran %d times, want once", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := st.proj.Settle(ctx, wire.DataStream); err != nil {
		t.Fatal(err)
	}
	if rcs, err := st.proj.ReceiptsByKey("SLOW", 10); err != nil || len(rcs) != 1 {
		t.Fatalf("%d receipts (%v), want 1", len(rcs), err)
	}
}

// Receipts are stored under their row's subject, so the NATS server's per-subject
// state does not grow with every call; a bus client learns of its own receipt on the
// invocation's notice subject.
func TestReceiptsShareTheirRowsSubject(t *testing.T) {
	st := newStack(t)
	s := st.newService(t, nil)
	st.run(t)
	st.putRow(t, fnRow("SAY", "echo", ""))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })

	notices := make(chan *nats.Msg, 64)
	sub, err := st.log.Conn().ChanSubscribe(wire.ReceiptNoticeSubjects, notices)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	// Ten by capdir itself, then ten by a bus client.
	for i := 0; i < 10; i++ {
		invoke(t, s, "SAY", "hi")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc := busConn(t, st, "c1")
	tok := wire.WithToken(st.mint(t, "c1", "SAY"))
	var invs []string
	for i := 0; i < 10; i++ {
		rc, err := wire.Invoke(ctx, nc, "c1", "SAY", "hi", tok)
		if err != nil {
			t.Fatal(err)
		}
		invs = append(invs, rc.InvocationID)
	}
	stream, err := st.log.JetStream().Stream(ctx, wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter(wire.ReceiptSubjects))
	if err != nil {
		t.Fatal(err)
	}
	if len(info.State.Subjects) != 1 || info.State.Subjects[wire.ReceiptSubject("SAY")] != 20 {
		t.Fatalf("receipt subjects in the log: %v; want 20 receipts on %s", info.State.Subjects, wire.ReceiptSubject("SAY"))
	}
	// Only the bus client's invocations are announced, on its own notice subjects;
	// capdir's callers wait in-process. Each Invoke returned on its notice, and
	// capdir's would have been published before them on the same connection.
	want := map[string]bool{}
	for _, inv := range invs {
		want[wire.ReceiptNoticeSubject("c1", "SAY", inv)] = true
	}
	for len(want) > 0 {
		select {
		case m := <-notices:
			if !want[m.Subject] {
				t.Fatalf("unexpected notice on %s", m.Subject)
			}
			delete(want, m.Subject)
			ev, err := wire.Decode(m.Data)
			var rc wire.Receipt
			if err != nil || ev.DataAs(&rc) != nil || wire.ReceiptNoticeSubject("c1", "SAY", rc.InvocationID) != m.Subject || rc.Result != "hi" {
				t.Fatalf("notice %s: %v %+v", m.Data, err, rc)
			}
		case <-ctx.Done():
			t.Fatalf("no notice on %v", want)
		}
	}
	if len(notices) != 0 {
		t.Fatalf("%d notices more than the bus client's", len(notices))
	}
}

// A bus client chooses its invocation ids; a request reusing one that already has
// a receipt is not run again (one receipt per invocation id).
func TestBusRequestReusingAnInvocationIDIsNotRunAgain(t *testing.T) {
	st := newStack(t)
	var runs atomic.Int32
	st.fns.Register("count", func(context.Context, []any) (string, error) { runs.Add(1); return "ran", nil })
	s := st.newService(t, func(c *dispatcher.ServiceConfig) { c.Workers = 1 }) // in order
	st.run(t)
	s.Start(context.Background())
	defer s.Close()
	st.putRow(t, fnRow("COUNT", "count", "# WHAT: count"))
	nc := busConn(t, st, "c1")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw := st.mint(t, "c1", "COUNT")
	tok := wire.WithToken(raw)
	first, err := wire.Invoke(ctx, nc, "c1", "COUNT", "", tok)
	if err != nil || !first.Ran {
		t.Fatalf("first invocation: %+v, %v", first, err)
	}
	if err := st.proj.Settle(ctx, wire.DataStream); err != nil {
		t.Fatal(err)
	}
	again := wire.InvocationRequest{InvocationID: first.InvocationID, Key: "COUNT", Token: raw}
	ev, err := wire.PrepareRequest(time.Now(), &again)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(ev)
	js, _ := jetstream.New(nc)
	if _, err := js.Publish(ctx, wire.BusRequestSubject("c1", "COUNT"), data); err != nil {
		t.Fatal(err)
	}
	// One worker takes requests in order: once the next one has its receipt, the
	// reused id has been handled.
	if _, err := wire.Invoke(ctx, nc, "c1", "COUNT", "", tok); err != nil {
		t.Fatal(err)
	}
	if n := runs.Load(); n != 2 {
		t.Fatalf("the row ran %d times for two invocation ids", n)
	}
	if n := receiptsFor(t, st.log, first.InvocationID); n != 1 {
		t.Fatalf("%d receipts for %s", n, first.InvocationID)
	}
}

// A log written before bus subjects existed has the dispatch consumer with one
// filter, capdir's own request subjects: starting the service updates it to take
// bus clients' requests too.
func TestConsumerFromBeforeBusSubjectsIsUpdated(t *testing.T) {
	st := newStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := st.log.JetStream().CreateOrUpdateConsumer(ctx, wire.DataStream, jetstream.ConsumerConfig{
		Durable: dispatcher.ConsumerName, FilterSubject: wire.RequestSubjects, AckPolicy: jetstream.AckExplicitPolicy,
	}); err != nil {
		t.Fatal(err)
	}
	s := st.newService(t, nil)
	st.run(t)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st.putRow(t, fnRow("SAY", "echo", "# WHAT: echo"))
	rc, err := wire.Invoke(ctx, busConn(t, st, "c1"), "c1", "SAY", "still here", wire.WithToken(st.mint(t, "c1", "SAY")))
	if err != nil || rc.Result != "still here" {
		t.Fatalf("bus request after the update: %+v, %v", rc, err)
	}
	if rc := invoke(t, s, "SAY", "and here"); rc.Result != "and here" {
		t.Fatalf("own request after the update: %+v", rc)
	}
}
