package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/dispatcher/runner/fnrunner"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
	"github.com/capdir/capdir/testdata"
)

// Flow rows run by a real node: each step a real invocation with its own request
// event and receipt, inline in the parent's worker.

// composeFns are the functions the flow tests' fn rows call; count counts its calls.
type composeFns struct {
	count atomic.Int64
}

func (f *composeFns) registry() *fnrunner.Registry {
	reg := fnrunner.NewRegistry()
	reg.Register("upper", func(_ context.Context, args []any) (string, error) {
		s, _ := args[0].(string)
		return strings.ToUpper(s), nil
	})
	reg.Register("fail", func(context.Context, []any) (string, error) { return "", errors.New("boom") })
	reg.Register("count", func(_ context.Context, args []any) (string, error) {
		f.count.Add(1)
		return fmt.Sprint(args...), nil
	})
	return reg
}

// startComposeNode starts a node with the composeFns registered.
func startComposeNode(t *testing.T, mutate func(*capdir.Config)) (*capdir.Node, *composeFns) {
	t.Helper()
	fns := &composeFns{}
	n := nodetest.Start(t, func(c *capdir.Config) {
		c.Fn.Registry = fns.registry()
		if mutate != nil {
			mutate(c)
		}
	})
	return n, fns
}

// putRows writes each row (a JSON object) through POST /api/directory.
func putRows(t *testing.T, n *capdir.Node, rows ...string) {
	t.Helper()
	for _, row := range rows {
		if code, body := nodetest.Do(t, n, "POST", "/api/directory", row); code != http.StatusCreated {
			t.Fatalf("create %s: %d %s", row, code, body)
		}
	}
}

// fnRowJSON is an fn row calling target with the JSON array template tmpl.
func fnRowJSON(key, target, tmpl string) string {
	b, _ := json.Marshal(map[string]any{"key": key, "type": "fn", "target": target, "content": "# WHAT: " + key + " (test row)\n" + tmpl})
	return string(b)
}

// flowRowJSON is a flow row with the step text steps.
func flowRowJSON(key, steps string) string {
	b, _ := json.Marshal(map[string]any{"key": key, "type": "flow", "content": "# WHAT: " + key + " (test flow)\n" + steps})
	return string(b)
}

// dispatchOK invokes key with body and returns the answer, which must be a 200.
func dispatchOK(t *testing.T, n *capdir.Node, key, body string) flowAnswer {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"key": key, "body": body})
	code, out := nodetest.Do(t, n, "POST", "/api/dispatch", string(b))
	if code != http.StatusOK {
		t.Fatalf("dispatch %s: %d %s", key, code, out)
	}
	var a flowAnswer
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("dispatch %s: %v: %s", key, err, out)
	}
	return a
}

type flowAnswer struct {
	OK     bool   `json:"ok"`
	Ran    bool   `json:"ran"`
	Trace  string `json:"trace"`
	Result string `json:"result"`
	Proof  struct {
		InvocationID string `json:"invocation_id"`
		Status       string `json:"status"`
	} `json:"proof"`
}

// treeNode is GET /api/receipts/{id}: a receipt with its steps' receipts nested.
type treeNode struct {
	wire.Receipt
	Steps          []treeNode `json:"steps"`
	Pending        bool       `json:"pending"`
	StepsTruncated bool       `json:"steps_truncated"`
}

func receiptTree(t *testing.T, n *capdir.Node, id string) treeNode {
	t.Helper()
	code, out := nodetest.Do(t, n, "GET", "/api/receipts/"+id, "")
	if code != http.StatusOK {
		t.Fatalf("GET /api/receipts/%s: %d %s", id, code, out)
	}
	var tr treeNode
	if err := json.Unmarshal([]byte(out), &tr); err != nil {
		t.Fatalf("receipt tree: %v: %s", err, out)
	}
	return tr
}

// stepRequests reads the INVOCATION_REQUESTED events on the step subjects, by
// invocation id.
func stepRequests(t *testing.T, l *eventlog.Log) map[string][]wire.InvocationRequest {
	t.Helper()
	got := map[string][]wire.InvocationRequest{}
	err := l.Read(context.Background(), wire.DataStream, 1, func(s eventlog.Stored) error {
		if s.Type == wire.TypeInvocationRequested && strings.HasPrefix(s.Subject, "capdir.data.step.") {
			var req wire.InvocationRequest
			if err := s.DataAs(&req); err != nil {
				return err
			}
			if s.Subject != wire.StepSubject(req.Key) {
				t.Errorf("step request for %s on %s", req.Key, s.Subject)
			}
			got[req.InvocationID] = append(got[req.InvocationID], req)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestFlowStepsAreInvocationsWithAReceiptTree(t *testing.T) {
	n, _ := startComposeNode(t, nil)
	putRows(t, n,
		fnRowJSON("UPPER", "upper", `["$1"]`),
		fnRowJSON("WRAP", "echo", `["<$1>"]`),
		fnRowJSON("JOIN", "echo", `["$1 $2 $3"]`),
		flowRowJSON("GREETING", "UPPER: $1 => FIRST > { WRAP: $PREV | UPPER: $2 } > JOIN: $PREV|$FIRST"),
	)
	a := dispatchOK(t, n, "GREETING", "ada|lovelace")
	if !a.OK || !a.Ran || a.Result != "<ADA> LOVELACE ADA" || a.Proof.Status != wire.StatusProvenMaterialResult {
		t.Fatalf("flow answered %+v", a)
	}
	parent := a.Proof.InvocationID
	tr := receiptTree(t, n, parent)
	if tr.Type != contract.TypeFlow || tr.Runner != "flow" || tr.Parent != "" {
		t.Errorf("parent receipt type %q runner %q parent %q", tr.Type, tr.Runner, tr.Parent)
	}
	names := []string{"1", "2.WRAP", "2.UPPER", "3"}
	var want []string
	for _, name := range names {
		want = append(want, dispatcher.StepInvocationID(parent, name))
	}
	if !reflect.DeepEqual(tr.Children, want) {
		t.Fatalf("parent children %q, want %q", tr.Children, want)
	}
	bodies := []string{"ada", "ADA", "lovelace", "<ADA>|LOVELACE|ADA"}
	results := []string{"ADA", "<ADA>", "LOVELACE", "<ADA> LOVELACE ADA"}
	keys := []string{"UPPER", "WRAP", "UPPER", "JOIN"}
	if len(tr.Steps) != len(want) {
		t.Fatalf("%d nested steps, want %d", len(tr.Steps), len(want))
	}
	for i, st := range tr.Steps {
		if st.InvocationID != want[i] || st.Parent != parent || st.Trace != a.Trace || st.Actor != tr.Actor {
			t.Errorf("step %s: id %s parent %q trace %s actor %s; want parent %s trace %s actor %s",
				names[i], st.InvocationID, st.Parent, st.Trace, st.Actor, parent, a.Trace, tr.Actor)
		}
		if st.Key != keys[i] || st.Body != bodies[i] || st.Result != results[i] || st.Status != wire.StatusProvenMaterialResult || len(st.Children) != 0 {
			t.Errorf("step %s: %+v", names[i], st.Receipt)
		}
	}
	// Each step is its own request in the log, on the step subject, once, placed
	// in the tree and carrying the caller's trace and credential.
	reqs := stepRequests(t, n.Log())
	for i, id := range want {
		if len(reqs[id]) != 1 {
			t.Errorf("step %s: %d request events, want 1", id, len(reqs[id]))
			continue
		}
		r := reqs[id][0]
		if r.Key != keys[i] || r.Body != bodies[i] || r.Parent != parent || r.Depth != 1 || r.Chain != "GREETING" ||
			r.Trace != a.Trace || r.Credential != "owner:terminal-key" {
			t.Errorf("step %s request %+v", id, r)
		}
	}
	// The public view stays keyless; the owner's list of a key's receipts has the steps.
	code, out := nodetest.DoKey(t, n, "GET", "/receipt/"+want[0], "", "")
	if code != http.StatusOK || strings.Contains(out, `"parent"`) || strings.Contains(out, `"result"`) {
		t.Errorf("public step receipt: %d %s", code, out)
	}
}

func TestFlowStopsAtTheFirstERRStep(t *testing.T) {
	n, fns := startComposeNode(t, nil)
	putRows(t, n,
		fnRowJSON("UPPER", "upper", `["$1"]`),
		fnRowJSON("FAIL", "fail", `["$1"]`),
		fnRowJSON("COUNT", "count", `["$1"]`),
		flowRowJSON("STOPS", "UPPER: $1 > FAIL: $PREV > COUNT: $PREV"),
	)
	a := dispatchOK(t, n, "STOPS", "x")
	if a.OK || a.Result != "ERR:fn:fail:boom" || a.Proof.Status != wire.StatusRanWithError {
		t.Fatalf("flow answered %+v", a)
	}
	if c := fns.count.Load(); c != 0 {
		t.Fatalf("the step after the failure ran %d times", c)
	}
	parent := a.Proof.InvocationID
	tr := receiptTree(t, n, parent)
	if len(tr.Children) != 2 || len(tr.Steps) != 2 || tr.Steps[1].Result != "ERR:fn:fail:boom" {
		t.Fatalf("receipt tree %+v", tr)
	}
	third := dispatcher.StepInvocationID(parent, "3")
	if code, out := nodetest.Do(t, n, "GET", "/api/receipts/"+third, ""); code != http.StatusNotFound {
		t.Errorf("the step that never ran: %d %s", code, out)
	}
	if rcs := nodetest.Receipts(t, n.Log(), third); len(rcs) != 0 {
		t.Errorf("receipts for the step that never ran: %+v", rcs)
	}
	if reqs := stepRequests(t, n.Log()); len(reqs[third]) != 0 || len(reqs) != 2 {
		t.Errorf("step requests %v", reqs)
	}
}

func TestFlowCycleAndDepthAreRefused(t *testing.T) {
	n, fns := startComposeNode(t, func(c *capdir.Config) { c.Dispatch.MaxDepth = 2 })
	putRows(t, n,
		fnRowJSON("COUNT", "count", `["$1"]`),
		flowRowJSON("CYC_A", "CYC_B: $1 > COUNT: $PREV"),
		flowRowJSON("CYC_B", "CYC_A: $1"),
		flowRowJSON("SELF", "SELF: $1"),
		flowRowJSON("D1", "D2: $1"),
		flowRowJSON("D2", "D3: $1"),
		flowRowJSON("D3", "COUNT: $1"),
	)
	a := dispatchOK(t, n, "CYC_A", "x")
	if a.OK || a.Result != "ERR:flow:cycle:CYC_A>CYC_B>CYC_A" {
		t.Fatalf("A → B → A answered %+v", a)
	}
	tr := receiptTree(t, n, a.Proof.InvocationID)
	if len(tr.Steps) != 1 || len(tr.Steps[0].Steps) != 1 {
		t.Fatalf("receipt tree %+v", tr)
	}
	refused := tr.Steps[0].Steps[0]
	if refused.Key != "CYC_A" || refused.Ran || refused.Status != wire.StatusFailedBeforeRun || refused.Result != a.Result || len(refused.Children) != 0 {
		t.Errorf("the refused step: %+v", refused.Receipt)
	}
	if r := stepRequests(t, n.Log())[refused.InvocationID]; len(r) != 1 || r[0].Depth != 2 || r[0].Chain != "CYC_A>CYC_B" || r[0].Parent != tr.Steps[0].InvocationID {
		t.Errorf("the refused step's request: %+v", r)
	}
	if a := dispatchOK(t, n, "SELF", "x"); a.Result != "ERR:flow:cycle:SELF>SELF" {
		t.Errorf("a flow calling itself answered %+v", a)
	}
	if a := dispatchOK(t, n, "D1", "x"); a.Result != "ERR:flow:depth:3>2" {
		t.Errorf("three levels under a bound of 2 answered %+v", a)
	}
	if c := fns.count.Load(); c != 0 {
		t.Errorf("a step past a refusal ran %d times", c)
	}
	// Within the bound it runs.
	if a := dispatchOK(t, n, "D2", "x"); !a.OK || a.Result != "x" {
		t.Errorf("two levels answered %+v", a)
	}
}

// More flows in flight than workers all complete: steps run inline in their
// flow's worker, never waiting behind other flows for a free one.
func TestFlowsInFlightDoNotStarveWorkers(t *testing.T) {
	n, _ := startComposeNode(t, func(c *capdir.Config) { c.Dispatch.Workers = 2 })
	putRows(t, n,
		fnRowJSON("WRAP", "echo", `["<$1>"]`),
		flowRowJSON("WRAP3", "WRAP: $1 > WRAP: $PREV > WRAP: $PREV"),
	)
	const flows = 8
	var wg sync.WaitGroup
	errs := make(chan error, flows)
	for i := range flows {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"key":"WRAP3","body":"f%d"}`, i)
			req, _ := http.NewRequest("POST", n.URL()+"/api/dispatch", strings.NewReader(body))
			req.Header.Set("x-terminal-key", nodetest.Key)
			req.Header.Set("content-type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			out, _ := io.ReadAll(resp.Body)
			if want := fmt.Sprintf(`"result":"<<<f%d>>>"`, i); resp.StatusCode != http.StatusOK || !strings.Contains(string(out), want) {
				errs <- fmt.Errorf("flow %d: %d %s", i, resp.StatusCode, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// The BLOOIO_FINISH flow row as the fixture has it, against stand-in rows: the
// built-in last_reply_of, and an http row to a local upstream for the send.
func TestSampleFlowBLOOIOFinish(t *testing.T) {
	up := upstreamtest.Start(t, upstreamtest.JSON(http.StatusOK, `{"sent":true}`))
	n, _ := startComposeNode(t, nil)
	var rows []contract.Row
	if err := json.Unmarshal(testdata.SampleRows(), &rows); err != nil {
		t.Fatal(err)
	}
	var flow string
	for _, r := range rows {
		if r.Key == "BLOOIO_FINISH" {
			b, _ := json.Marshal(map[string]any{"key": r.Key, "type": r.Type, "target": r.Target, "content": r.Content})
			flow = string(b)
		}
	}
	send, _ := json.Marshal(map[string]any{
		"key": "SEND_BY_CHANNEL", "type": "http", "target": "POST " + up.URL + "/send/$1",
		"content": "# WHAT: send a text on a channel (local stand-in)\n# ARGS: $1=channel $2=recipient $3+=text\n" + `{"to":"$2","text":"$3+"}`,
	})
	putRows(t, n, flow, fnRowJSON("LAST_REPLY_OF", "last_reply_of", `["$1+"]`), string(send))

	agentText := `thinking...[REPLY]draft[/REPLY] more [REPLY] Your order shipped! "2 boxes" [/REPLY]`
	a := dispatchOK(t, n, "BLOOIO_FINISH", agentText+"|+15551234567")
	if !a.OK || a.Result != `HTTP 200:{"sent":true}` {
		t.Fatalf("BLOOIO_FINISH answered %+v", a)
	}
	var sent []map[string]string
	var paths []string
	for _, r := range up.Requests() {
		var m map[string]string
		if err := json.Unmarshal([]byte(r.Body), &m); err != nil {
			t.Errorf("upstream got %q: %v", r.Body, err)
		}
		sent, paths = append(sent, m), append(paths, r.Path)
	}
	if want := []map[string]string{{"to": "+15551234567", "text": `Your order shipped! "2 boxes"`}}; !reflect.DeepEqual(sent, want) || len(paths) != 1 || paths[0] != "/send/blooio" {
		t.Errorf("upstream got %q at %q, want %q at /send/blooio", sent, paths, want)
	}
	tr := receiptTree(t, n, a.Proof.InvocationID)
	if len(tr.Steps) != 2 || tr.Steps[0].Key != "LAST_REPLY_OF" || tr.Steps[1].Key != "SEND_BY_CHANNEL" || tr.Steps[1].Runner != "http" || tr.Steps[1].Upstream != 200 {
		t.Fatalf("receipt tree %+v", tr)
	}

	a = dispatchOK(t, n, "BLOOIO_FINISH", "no reply here|+15551234567")
	if a.OK || a.Result != "ERR:fn:last_reply_of:no_reply_block" {
		t.Fatalf("without a reply block: %+v", a)
	}
	if got := up.Bodies(); len(got) != 1 {
		t.Errorf("sent without a reply block: %q", got)
	}
}
