package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/api"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

// jsDelete is the JetStream API subject that deletes capdir's control stream.
const jsDelete = "$JS.API.STREAM.DELETE." + wire.ControlStream

// A nats row may not address NATS's API, another caller's inbox or capdir's log, nor
// name a wildcard or an empty token: every write route refuses it with 400 and the
// rule, and appends nothing.
func TestNATSTargetRefusedAtWrite(t *testing.T) {
	n := nodetest.Start(t, nil)
	const doc = `# WHAT: a bus service\n# ARGS: none`
	mustDo(t, n, 201, "POST", "/api/directory", `{"key":"BUS","type":"fn","runner":"nats","target":"svc.ok","content":"`+doc+`"}`)
	targets := map[string]string{
		jsDelete:                  "is reserved",
		"$SYS.REQ.SERVER.PING":    "is reserved",
		"$KV.cfg.k":               "is reserved",
		"_INBOX.other.1":          "is reserved",
		"capdir.data.req.BUS":     "is reserved",
		"capdir.ctl.dir.BUS":      "is reserved",
		"capdir.receipt.BUS.inv1": "is reserved",
		"svc.*":                   "contains a wildcard",
		"svc.>":                   "contains a wildcard",
		"svc..x":                  "has an empty token",
	}
	before := nodetest.ControlSeq(t, n)
	for target, rule := range targets {
		writes := []struct{ method, path, ctype, body string }{
			{"POST", "/api/directory", "application/json", `{"key":"EVIL","type":"fn","runner":"nats","target":"` + target + `","content":"` + doc + `"}`},
			{"PUT", "/api/directory/EVIL", "application/json", `{"type":"fn","runner":"nats","target":"` + target + `","content":"` + doc + `"}`},
			{"PUT", "/api/directory/BUS", "application/json", `{"type":"fn","runner":"nats","target":"` + target + `","content":"` + doc + `"}`},
			{"PATCH", "/api/directory/BUS", "application/json", `{"target":"` + target + `"}`},
		}
		for _, w := range writes {
			code, body := send(t, n, w.method, w.path, w.ctype, w.body)
			if code != 400 || !strings.Contains(body, "target: must be one literal NATS subject") || !strings.Contains(body, rule) {
				t.Errorf("%s %s target %q: %d %s; want 400 saying %q", w.method, w.path, target, code, body, rule)
			}
		}
		for mode, key := range map[string]string{"": "EVIL", "?mode=upsert": "BUS"} {
			code, body := send(t, n, "POST", "/api/directory/import"+mode, "application/x-ndjson",
				`{"key":"`+key+`","type":"fn","runner":"nats","target":"`+target+`","content":"`+doc+`"}`+"\n")
			if code != 200 || !strings.Contains(body, `"ok":0`) || !strings.Contains(body, rule) {
				t.Errorf("import%s target %q: %d %s", mode, target, code, body)
			}
		}
	}
	if after := nodetest.ControlSeq(t, n); after != before {
		t.Fatalf("refused writes appended %d events", after-before)
	}
	// The same target on a row another runner executes is just text (an fn name).
	mustDo(t, n, 201, "POST", "/api/directory", `{"key":"FN_TEXT","type":"fn","target":"`+jsDelete+`","content":"`+doc+`"}`)
}

// A nats row that never went through the write path (written before the rule, or
// appended to the log by another writer) still cannot reach JetStream's API: the
// runner refuses it before any request and the control stream is untouched.
func TestNATSTargetRefusedAtRun(t *testing.T) {
	n := nodetest.Start(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	smuggle(ctx, t, n, contract.Row{Key: "JS_DELETE", Type: "fn", Runner: "nats", Target: jsDelete,
		Content: "# WHAT: smuggled", Enabled: 1, PlannerVisible: 1, PlannerRank: 100})
	stream, err := n.Log().JetStream().Stream(ctx, wire.ControlStream)
	if err != nil {
		t.Fatal(err)
	}
	before, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const want = "ERR:nats:reserved_subject:" + jsDelete
	code, got := dispatch(t, n, `{"key":"JS_DELETE","body":"{}"}`)
	if code != 200 || got["ok"] != false || got["ran"] != false || got["result"] != want {
		t.Fatalf("dispatch: %d %v", code, got)
	}
	// Shape mode answers no result; its receipt holds the refusal.
	code, got = dispatch(t, n, `{"key":"JS_DELETE","body":"{}","shape":true}`)
	inv, _ := got["proof"].(map[string]any)["invocation_id"].(string)
	if rc := obj(t, mustDo(t, n, 200, "GET", "/api/receipts/"+inv, "")); code != 200 || got["ok"] != false || rc["result"] != want {
		t.Fatalf("shape: %d %v, receipt %v", code, got, rc)
	}
	after, err := n.Log().JetStream().Stream(ctx, wire.ControlStream)
	if err != nil {
		t.Fatalf("the control stream is gone: %v", err)
	}
	info, err := after.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Created.Equal(before.Created) || info.State.Msgs != before.State.Msgs || info.State.FirstSeq != before.State.FirstSeq {
		t.Fatalf("control stream changed: before %+v, after %+v", before.State, info.State)
	}
}

// smuggle appends a DIRECTORY_MUTATE creating row straight to the log, as a writer
// other than the facade could, and waits until it is projected.
func smuggle(ctx context.Context, t *testing.T, n *capdir.Node, row contract.Row) {
	t.Helper()
	ev, err := n.Log().NewEvent(wire.TypeDirectoryMutate, api.OwnerActor,
		contract.DirectoryMutation{Action: contract.ActionCreate, Key: row.Key, Row: &row})
	if err != nil {
		t.Fatal(err)
	}
	seq, err := n.Log().Append(ctx, wire.DirectorySubject(row.Key), ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Projector().WaitFor(ctx, wire.ControlStream, seq); err != nil {
		t.Fatal(err)
	}
}
