package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

// addBusIdentity records a bus identity in a node's data dir, before the node
// starts, and returns its seed file.
func addBusIdentity(t testing.TB, dataDir, name, role string, serve ...string) string {
	t.Helper()
	_, seed, err := eventlog.AddBusClient(dataDir, eventlog.BusClient{Name: name, Role: role, Serve: serve}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return seed
}

// busToken is a capability token for sub that may invoke keys, minted with the
// node's own minter: a bus client is never the owner, so it needs one to run a row.
func busToken(t testing.TB, n *capdir.Node, sub string, keys ...string) string {
	t.Helper()
	tok, _, err := n.Mint(token.MintRequest{Subject: sub, Scope: token.Scope{Keys: keys}})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// guardedNode is a node whose embedded NATS server listens on a loopback port, with
// two bus clients (c1, c2) and a service (svc, serving svc.upper) recorded, and a
// GREET fn row.
type guardedNode struct {
	n     *capdir.Node
	seeds map[string]string
}

func startGuardedNode(t *testing.T) *guardedNode {
	t.Helper()
	g := &guardedNode{seeds: map[string]string{}}
	g.n = nodetest.Start(t, func(c *capdir.Config) {
		c.Log.Listen = "127.0.0.1:0"
		g.seeds["c1"] = addBusIdentity(t, c.Log.DataDir, "c1", eventlog.RoleClient)
		g.seeds["c2"] = addBusIdentity(t, c.Log.DataDir, "c2", eventlog.RoleClient)
		g.seeds["svc"] = addBusIdentity(t, c.Log.DataDir, "svc", eventlog.RoleService, "svc.upper")
	})
	row := `{"key":"GREET","type":"fn","target":"echo","content":"# WHAT: echo\n[\"Hello, $1!\"]"}`
	if code, body := nodetest.Do(t, g.n, "POST", "/api/directory", row); code != 201 {
		t.Fatalf("POST row: %d %s", code, body)
	}
	return g
}

// busClient is a real NATS client over TCP, connected as one identity, with the
// asynchronous errors the server sends it (permission violations) on errs.
// packOf is a pack (as capdir appends several of its events in one message)
// carrying data on subject.
func packOf(subject string, data []byte) []byte {
	return wire.AppendPacked([]byte{wire.PackFormat}, subject, data)
}

type busClient struct {
	nc   *nats.Conn
	errs chan error
}

func (g *guardedNode) connect(t *testing.T, name string) *busClient {
	t.Helper()
	seed, err := nats.NkeyOptionFromSeed(g.seeds[name])
	if err != nil {
		t.Fatal(err)
	}
	bc := &busClient{errs: make(chan error, 64)}
	opts := append(wire.ClientOptions(name), seed, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		bc.errs <- err
	}))
	if bc.nc, err = nats.Connect(g.n.Log().ClientURL(), opts...); err != nil {
		t.Fatalf("connect as %s: %v", name, err)
	}
	t.Cleanup(bc.nc.Close)
	return bc
}

// refused waits for the server's permission violation naming what (a subject,
// quoted as the server quotes it).
func (bc *busClient) refused(t *testing.T, what string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case err := <-bc.errs:
			if strings.Contains(err.Error(), "Permissions Violation") && strings.Contains(err.Error(), `"`+what+`"`) {
				return
			}
			t.Logf("other async error: %v", err)
		case <-timeout:
			t.Fatalf("no permission violation for %q", what)
		}
	}
}

// logState is what an attack must leave alone: both streams' last sequences and
// the projection's digest.
type logState struct {
	ctl, data uint64
	digest    string
}

func stateOf(t *testing.T, n *capdir.Node) logState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := nodetest.CatchUp(ctx, n); err != nil {
		t.Fatal(err)
	}
	var s logState
	var err error
	if s.ctl, err = n.Log().LastSeq(ctx, wire.ControlStream); err != nil {
		t.Fatal(err)
	}
	if s.data, err = n.Log().LastSeq(ctx, wire.DataStream); err != nil {
		t.Fatal(err)
	}
	if s.digest, err = n.Projector().Digest(); err != nil {
		t.Fatal(err)
	}
	return s
}

// envelope is an event a hostile client builds by hand.
func envelope(t *testing.T, typ, actor string, data any) []byte {
	t.Helper()
	ev, err := wire.NewEvent(time.Now(), typ, actor, data)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(ev)
	return b
}

// With the embedded server on TCP, a client without credentials cannot connect,
// and a client with credentials can do nothing but invoke rows on its own subject
// and read its own receipts: every other publish and subscription is refused by
// the server, and the log, the projection and its digest are as they were.
func TestBusRefusesWhatAClientMayNotDo(t *testing.T) {
	g := startGuardedNode(t)
	url := g.n.Log().ClientURL()
	before := stateOf(t, g.n)

	t.Run("no credentials", func(t *testing.T) {
		nc, err := nats.Connect(url, nats.NoReconnect())
		if err == nil {
			nc.Close()
			t.Fatal("a client without credentials connected")
		}
		if !strings.Contains(err.Error(), "Authorization Violation") {
			t.Fatalf("err = %v, want an authorization violation", err)
		}
	})
	t.Run("an nkey capdir never recorded", func(t *testing.T) {
		kp, _ := nkeys.CreateUser()
		pub, _ := kp.PublicKey()
		nc, err := nats.Connect(url, nats.NoReconnect(), nats.Nkey(pub, kp.Sign))
		if err == nil {
			nc.Close()
			t.Fatal("an unknown nkey connected")
		}
	})

	c1 := g.connect(t, "c1")
	dirX := envelope(t, wire.TypeDirectoryMutate, wire.OwnerActor, map[string]any{
		"action": "create", "key": "X", "row": map[string]any{"key": "X", "type": "fn", "target": "echo", "enabled": 1}})
	rcptX := envelope(t, wire.TypeReceipt, "engine:forged", wire.Receipt{ReceiptSummary: wire.ReceiptSummary{InvocationID: "inv_forged", Key: "GREET"}})
	reqX := envelope(t, wire.TypeInvocationRequested, wire.OwnerActor, wire.InvocationRequest{Key: "GREET", Body: "x", Credential: wire.OwnerActor})
	for _, p := range []struct {
		name, subject string
		data          []byte
	}{
		{"JetStream API: list streams", "$JS.API.STREAM.LIST", nil},
		{"JetStream API: delete a stream", "$JS.API.STREAM.DELETE." + wire.DataStream, nil},
		{"JetStream API: purge a stream", "$JS.API.STREAM.PURGE." + wire.ControlStream, nil},
		{"system account", "$SYS.REQ.SERVER.PING", nil},
		{"a directory mutation", wire.DirectorySubject("X"), dirX},
		{"a receipt", wire.ReceiptSubject("GREET"), rcptX},
		{"a breaker reset", wire.BreakerSubject("GREET"), envelope(t, wire.TypeBreakerReset, wire.OwnerActor, map[string]string{"key": "GREET"})},
		{"a request on capdir's own subject", wire.RequestSubject("GREET"), reqX},
		{"a pack of requests", wire.RequestPackSubject, packOf(wire.RequestSubject("GREET"), reqX)},
		{"a pack of receipts", wire.ReceiptPackSubject, packOf(wire.ReceiptSubject("GREET"), rcptX)},
		{"a request on another client's subject", wire.BusRequestSubject("c2", "GREET"), reqX},
		{"a receipt notice to another client", wire.ReceiptNoticeSubject("c2", "GREET", "inv_x"), rcptX},
		{"a call on another client's call subject", wire.CallSubject("c2", "GREET"), reqX},
		{"a call outside the call subjects", "capdir.call", reqX},
		{"capdir's control subjects", "capdir.ctl.anything", dirX},
	} {
		t.Run("publish "+p.name, func(t *testing.T) {
			if err := c1.nc.Publish(p.subject, p.data); err != nil {
				t.Fatal(err)
			}
			c1.refused(t, p.subject)
		})
	}
	for _, subject := range []string{
		"capdir.data.>",                 // every request's arguments, every receipt's result
		wire.ReceiptNoticeSubjects,      // every client's receipts
		wire.ReceiptNotices("c2"),       // another client's receipts
		"capdir.>",                      //
		"_INBOX.>",                      // other callers' replies
		wire.InboxPrefix("c2") + ".>",   // another client's replies
		"$JS.EVENT.>",                   // JetStream's advisories
		"svc.upper",                     // a service's requests
		">",                             //
		"$SYS.>",                        //
		"capdir.data.bus.c1.GREET",      // even its own requests, once stored
		"capdir.ctl.dir.GREET",          //
		"$JS.API.CONSUMER.MSG.NEXT.>",   //
		"capdir.receipt.c1GREET",        // a sibling of its own notices
		"capdir.receipt.c1",             //
		"capdir.receipt.*.GREET.inv_1",  //
		"capdir.receipt.c1x.GREET.inv1", //
		wire.CallSubjects,               // every client's calls, and their tokens
		wire.ClientCalls("c1"),          // even its own, to answer them itself
		wire.ClientCalls("c2"),          //
	} {
		t.Run("subscribe "+subject, func(t *testing.T) {
			if _, err := c1.nc.Subscribe(subject, func(*nats.Msg) {}); err != nil {
				t.Fatal(err)
			}
			c1.refused(t, subject)
		})
	}
	t.Run("a service publishes nothing and reads only what it serves", func(t *testing.T) {
		svc := g.connect(t, "svc")
		svc.nc.Publish(wire.DirectorySubject("X"), dirX)
		svc.refused(t, wire.DirectorySubject("X"))
		svc.nc.Publish(wire.BusRequestSubject("c1", "GREET"), reqX)
		svc.refused(t, wire.BusRequestSubject("c1", "GREET"))
		svc.nc.Publish(wire.CallSubject("c1", "GREET"), reqX)
		svc.refused(t, wire.CallSubject("c1", "GREET"))
		svc.nc.Subscribe(wire.CallSubjects, func(*nats.Msg) {})
		svc.refused(t, wire.CallSubjects)
		svc.nc.Subscribe("capdir.>", func(*nats.Msg) {})
		svc.refused(t, "capdir.>")
		svc.nc.Subscribe("_INBOX.>", func(*nats.Msg) {})
		svc.refused(t, "_INBOX.>")
	})
	if after := stateOf(t, g.n); after != before {
		t.Fatalf("the refused attempts changed the log or the projection:\nbefore %+v\nafter  %+v", before, after)
	}
}

// A client may write its own request subject only; what it writes there is a
// request of its own or nothing: a body claiming the owner is the client's, a
// receipt, a directory mutation or a breaker reset published there is neither
// run nor folded, and the acknowledgement of a publish whose reply subject names
// a subject of the log stays in the client's own account.
func TestBusClientsOwnSubjectIsItsOwn(t *testing.T) {
	g := startGuardedNode(t)
	c1 := g.connect(t, "c1")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	js, err := jetstream.New(c1.nc)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("a request claiming the owner's credential", func(t *testing.T) {
		req := wire.InvocationRequest{Key: "GREET", Body: "Ada", Credential: wire.OwnerActor}
		ev, err := wire.PrepareRequest(time.Now(), &req)
		if err != nil {
			t.Fatal(err)
		}
		ev.Actor = wire.OwnerActor
		notices := make(chan *nats.Msg, 1)
		sub, err := c1.nc.ChanSubscribe(wire.ReceiptNoticeSubject("c1", "GREET", req.InvocationID), notices)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
		data, _ := json.Marshal(ev)
		if _, err := js.Publish(ctx, wire.BusRequestSubject("c1", "GREET"), data); err != nil {
			t.Fatal(err)
		}
		var rc wire.Receipt
		select {
		case m := <-notices:
			got, err := wire.Decode(m.Data)
			if err != nil || got.DataAs(&rc) != nil {
				t.Fatalf("notice %s: %v", m.Data, err)
			}
		case <-ctx.Done():
			t.Fatal("no receipt notice")
		}
		if rc.Actor != "nats:c1" {
			t.Fatalf("receipt actor %q, want nats:c1: a bus client is never the owner", rc.Actor)
		}
		// Once the node verifies capability tokens, a bus request without one is
		// refused; until then it runs as the client.
		if rc.Status == wire.StatusRefusedToken {
			if rc.Result != "token:required" {
				t.Fatalf("refusal %q, want token:required", rc.Result)
			}
		} else if rc.Status != wire.StatusProvenMaterialResult || rc.Result != "Hello, Ada!" {
			t.Fatalf("receipt = %+v", rc)
		}
		code, body := nodetest.Do(t, g.n, "GET", "/api/receipts/"+req.InvocationID, "")
		if code != 200 || !strings.Contains(body, `"actor":"nats:c1"`) {
			t.Fatalf("stored receipt: %d %s", code, body)
		}
	})

	before := stateOf(t, g.n)
	views := func() string {
		var b strings.Builder
		for _, path := range []string{"/api/directory", "/api/receipts?key=GREET", "/api/receipts?key=EVIL", "/api/breaker", "/api/directory/EVIL", "/api/receipts/inv_forged"} {
			code, body := nodetest.Do(t, g.n, "GET", path, "")
			fmt.Fprintf(&b, "%s %d %s\n", path, code, body)
		}
		return b.String()
	}
	beforeViews := views()
	t.Run("other events on its own subject are not folded", func(t *testing.T) {
		for _, data := range [][]byte{
			envelope(t, wire.TypeDirectoryMutate, wire.OwnerActor, map[string]any{
				"action": "create", "key": "EVIL", "row": map[string]any{"key": "EVIL", "type": "fn", "target": "echo", "enabled": 1}}),
			envelope(t, wire.TypeReceipt, "engine:forged", wire.Receipt{ReceiptSummary: wire.ReceiptSummary{
				InvocationID: "inv_forged", Key: "GREET", Status: wire.StatusProvenMaterialResult, OK: true}}),
			envelope(t, wire.TypeBreakerReset, wire.OwnerActor, map[string]string{"key": "GREET"}),
		} {
			if _, err := js.Publish(ctx, wire.BusRequestSubject("c1", "EVIL"), data); err != nil {
				t.Fatal(err)
			}
		}
		// The log took the three events; the projection moved its checkpoint past
		// them and nothing else.
		after := stateOf(t, g.n)
		if after.ctl != before.ctl || after.data != before.data+3 {
			t.Fatalf("log before %+v, after %+v; want the three events on the data stream", before, after)
		}
		if got := views(); got != beforeViews {
			t.Fatalf("the projection changed:\nbefore\n%s\nafter\n%s", beforeViews, got)
		}
		if code, _ := nodetest.Do(t, g.n, "GET", "/api/directory/EVIL", ""); code != 404 {
			t.Fatalf("a directory mutation from a bus client made a row: %d", code)
		}
		if code, _ := nodetest.Do(t, g.n, "GET", "/api/receipts/inv_forged", ""); code != 404 {
			t.Fatalf("a receipt from a bus client was folded: %d", code)
		}
	})

	t.Run("an acknowledgement sent to a subject of the log", func(t *testing.T) {
		s := stateOf(t, g.n)
		for _, reply := range []string{wire.DirectorySubject("GREET"), wire.ReceiptSubject("GREET"), wire.RequestSubject("GREET")} {
			if err := c1.nc.PublishMsg(&nats.Msg{Subject: wire.BusRequestSubject("c1", "NOPE"), Reply: reply, Data: []byte("junk")}); err != nil {
				t.Fatal(err)
			}
		}
		// The same client's next request is stored after those three.
		rc, err := wire.Invoke(ctx, c1.nc, "c1", "GREET", "Grace")
		if err != nil {
			t.Fatal(err)
		}
		after := stateOf(t, g.n)
		if after.ctl != s.ctl {
			t.Fatalf("the control stream moved from %d to %d", s.ctl, after.ctl)
		}
		// Three junk requests, the request and its receipt: nothing else.
		if after.data != s.data+5 {
			t.Fatalf("the data stream moved from %d to %d, want +5", s.data, after.data)
		}
		if rc.Actor != "nats:c1" {
			t.Fatalf("receipt = %+v", rc)
		}
		// The row is still writable: nothing moved its subject's last sequence.
		if code, body := nodetest.Do(t, g.n, "PATCH", "/api/directory/GREET", `{"category":"demo"}`); code != 200 {
			t.Fatalf("PATCH GREET after the attempt: %d %s", code, body)
		}
	})
}

// The happy path: a client with its credential, a capability token and wire.Invoke
// gets its receipt (without the token, a refusal: a bus client is never the owner);
// a service answers the rows of the nats runner that name its subject.
func TestBusClientInvokesAndServiceServes(t *testing.T) {
	g := startGuardedNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c1 := g.connect(t, "c1")
	rc, err := wire.Invoke(ctx, c1.nc, "c1", "GREET", "Ada")
	if err != nil {
		t.Fatal(err)
	}
	if rc.Actor != "nats:c1" || rc.Status != wire.StatusRefusedToken || rc.Result != "token:required" || rc.Ran {
		t.Fatalf("receipt without a token = %+v", rc)
	}
	rc, err = wire.Invoke(ctx, c1.nc, "c1", "GREET", "Ada", wire.WithToken(busToken(t, g.n, "c1-agent", "GREET")))
	if err != nil {
		t.Fatal(err)
	}
	if rc.Actor != "token:c1-agent" || rc.Result != "Hello, Ada!" || rc.Status != wire.StatusProvenMaterialResult {
		t.Fatalf("receipt = %+v", rc)
	}
	// Without the client's inbox prefix, Invoke says what to fix instead of waiting.
	seed, _ := nats.NkeyOptionFromSeed(g.seeds["c2"])
	plain, err := nats.Connect(g.n.Log().ClientURL(), seed)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := wire.Invoke(ctx, plain, "c2", "GREET", "x"); err == nil || !strings.Contains(err.Error(), "wire.ClientOptions") {
		t.Fatalf("Invoke without the inbox prefix: %v", err)
	}

	svc := g.connect(t, "svc")
	if _, err := svc.nc.Subscribe("svc.upper", func(m *nats.Msg) { m.Respond([]byte(strings.ToUpper(string(m.Data)))) }); err != nil {
		t.Fatal(err)
	}
	if err := svc.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	row := `{"key":"UPPER","type":"fn","runner":"nats","target":"svc.upper","content":"# WHAT: upper case, served over the bus"}`
	if code, body := nodetest.Do(t, g.n, "POST", "/api/directory", row); code != 201 {
		t.Fatalf("POST row: %d %s", code, body)
	}
	code, body := nodetest.Do(t, g.n, "POST", "/api/dispatch", `{"key":"UPPER","body":"ada"}`)
	if code != 200 || !strings.Contains(body, `"result":"ADA"`) {
		t.Fatalf("dispatch to the service: %d %s", code, body)
	}
	select {
	case err := <-svc.errs:
		t.Fatalf("the service's answer was refused: %v", err)
	default:
	}
}

// The server reads the identities when it starts: one added while it runs is
// admitted from the next start, one removed is refused from then.
func TestBusIdentitiesTakeEffectAtStart(t *testing.T) {
	dir := t.TempDir()
	start := func() *capdir.Node {
		t.Helper()
		n, err := capdir.Start(context.Background(), capdir.Config{
			TerminalKey: nodetest.Key,
			Log:         eventlog.Config{DataDir: dir, Listen: "127.0.0.1:0"},
		}, nodetest.Quiet())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	connect := func(n *capdir.Node, name, seedFile string) error {
		seed, err := nats.NkeyOptionFromSeed(seedFile)
		if err != nil {
			t.Fatal(err)
		}
		nc, err := nats.Connect(n.Log().ClientURL(), append(wire.ClientOptions(name), seed, nats.NoReconnect())...)
		if err == nil {
			nc.Close()
		}
		return err
	}
	stop := func(n *capdir.Node) {
		t.Helper()
		if err := n.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// The client keeps its seed: remove deletes the copy in the data dir.
	old := filepath.Join(t.TempDir(), "old.nk")
	seed, err := os.ReadFile(addBusIdentity(t, dir, "old", eventlog.RoleClient))
	if err != nil || os.WriteFile(old, seed, 0o600) != nil {
		t.Fatal(err)
	}
	n := start()
	late := addBusIdentity(t, dir, "late", eventlog.RoleClient)
	if err := connect(n, "late", late); err == nil {
		t.Fatal("an identity added while the server ran was admitted before a restart")
	}
	if err := connect(n, "old", old); err != nil {
		t.Fatal(err)
	}
	stop(n)
	if err := eventlog.RemoveBusClient(dir, "old"); err != nil {
		t.Fatal(err)
	}
	n = start()
	defer stop(n)
	if err := connect(n, "late", late); err != nil {
		t.Fatalf("after a restart: %v", err)
	}
	if err := connect(n, "old", old); err == nil {
		t.Fatal("a removed identity was admitted after a restart")
	}
}

// A client knows its invocation ids, hence the event id its receipt would be
// appended under were it derived from the invocation id alone: publishing
// something under that id first must not leave the invocation without a receipt in
// the log (receipt event ids are keyed with the deployment's secret).
func TestBusClientCannotTakeItsReceiptsEventID(t *testing.T) {
	g := startGuardedNode(t)
	c1 := g.connect(t, "c1")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	js, err := jetstream.New(c1.nc)
	if err != nil {
		t.Fatal(err)
	}
	req := wire.InvocationRequest{Key: "GREET", Body: "Ada", Credential: wire.ClientActor("c1"), Token: busToken(t, g.n, "c1-agent", "GREET")}
	ev, err := wire.PrepareRequest(time.Now(), &req)
	if err != nil {
		t.Fatal(err)
	}
	receiptID := "rcpt_" + strings.TrimPrefix(req.InvocationID, wire.InvocationPrefix)
	if _, err := js.Publish(ctx, wire.BusRequestSubject("c1", "GREET"), []byte("taken"), jetstream.WithMsgID(receiptID)); err != nil {
		t.Fatal(err)
	}
	notices := make(chan *nats.Msg, 1)
	sub, err := c1.nc.ChanSubscribe(wire.ReceiptNoticeSubject("c1", "GREET", req.InvocationID), notices)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	data, _ := json.Marshal(ev)
	if _, err := js.Publish(ctx, wire.BusRequestSubject("c1", "GREET"), data); err != nil {
		t.Fatal(err)
	}
	select {
	case <-notices:
	case <-ctx.Done():
		t.Fatal("no receipt notice")
	}
	if err := nodetest.CatchUp(ctx, g.n); err != nil {
		t.Fatal(err)
	}
	code, body := nodetest.Do(t, g.n, "GET", "/api/receipts/"+req.InvocationID, "")
	if code != 200 || !strings.Contains(body, `"result":"Hello, Ada!"`) {
		t.Fatalf("the invocation ran, but its receipt is not in the log: %d %s", code, body)
	}
}

// A credential used under another client's name is refused by the server, and
// Invoke says so rather than only that it timed out.
func TestInvokeUnderAnotherNameSaysWhy(t *testing.T) {
	g := startGuardedNode(t)
	seed, err := nats.NkeyOptionFromSeed(g.seeds["c1"])
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(g.n.Log().ClientURL(), append(wire.ClientOptions("c2"), seed, nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second) // the server sends no reply: only the deadline ends the publish
	defer cancel()
	before := stateOf(t, g.n)
	_, err = wire.Invoke(ctx, nc, "c2", "GREET", "x")
	if !errors.Is(err, wire.ErrRefused) || !strings.Contains(err.Error(), `is "c2" the client this credential was made for?`) {
		t.Fatalf("err = %v", err)
	}
	if after := stateOf(t, g.n); after != before {
		t.Fatalf("a refused request changed the log: %+v -> %+v", before, after)
	}
}
