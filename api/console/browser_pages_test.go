package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
	"github.com/chromedp/chromedp"
)

// Sign in; a create refused by the hygiene gate shows its literal on the form; the
// fixed row is created, shown with its fingerprint and document, and listed; a
// row written through the REST API appears without a reload; disable; delete
// after confirming.
func TestBrowserDirectory(t *testing.T) {
	n := startNode(t)
	b := openTab(t, n)
	b.signIn()
	// The keyboard alone: the first Tab reaches "Skip to content", the next ones the sections.
	b.do("tab", chromedp.KeyEvent("\t"))
	if got, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.activeElement.textContent`)); err != nil || got != "Skip to content" {
		t.Errorf("first Tab focuses %q (%v), want the skip link", got, err)
	}
	b.do("tab", chromedp.KeyEvent("\t"))
	if got, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.activeElement.textContent`)); err != nil || got != "Directory" {
		t.Errorf("second Tab focuses %q (%v), want the first section", got, err)
	}
	b.do("new row", chromedp.Click(chromedp.ID("new-row")), chromedp.WaitVisible(chromedp.ID("rowform")),
		chromedp.SendKeys(chromedp.ID("r-key"), "PAY"),
		chromedp.SendKeys(chromedp.ID("r-target"), "echo"),
		chromedp.SendKeys(chromedp.ID("r-content"), "# WHAT: Pay an amount.\n# ARGS: $1=amount"),
		chromedp.Click(chromedp.CSS(`input[name="sensitive"]`)),
		chromedp.Click(chromedp.ID("save")),
		chromedp.WaitVisible(chromedp.ID("error")))
	if got := b.text("#error"); !strings.Contains(got, `"error":"registry_hygiene_refused: high_risk_missing_schema"`) {
		t.Fatalf("refused create shows %q, want the hygiene literal", got)
	}
	b.shot("row-form-refused")
	b.do("fix and create", chromedp.SendKeys(chromedp.ID("r-input_schema"), `{"type":"string"}`),
		chromedp.Click(chromedp.ID("save")), chromedp.WaitVisible(chromedp.ID("fingerprint")))
	row, _, err := n.Projector().Row("PAY")
	if err != nil || row.Sensitive != 1 || row.InputSchema != `{"type":"string"}` {
		t.Fatalf("created row %+v, %v", row, err)
	}
	if got := b.text("#notice"); got != "Created PAY." {
		t.Errorf("notice %q", got)
	}
	if doc := b.text("#document"); !strings.Contains(doc, "PAY") {
		t.Errorf("contract document %q", doc)
	}
	b.shot("row")

	b.open("/console/", "#row-PAY")
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", greetRow); code != 201 {
		t.Fatalf("create over REST: %d %s", code, body)
	}
	b.do("the new row appears without a reload", chromedp.WaitVisible(chromedp.ID("row-GREET")))
	b.shot("directory")
	b.do("narrow window", chromedp.EmulateViewport(390, 844), chromedp.WaitVisible(chromedp.ID("row-GREET")))
	b.shot("directory-narrow")
	b.do("wide again", chromedp.EmulateViewport(1280, 800))

	b.do("search", chromedp.SendKeys(chromedp.ID("f-ask"), "greets\r"), chromedp.WaitVisible(chromedp.ID("row-GREET")),
		chromedp.WaitNotPresent(chromedp.ID("row-PAY")))

	b.do("disable", chromedp.Navigate(b.base+"/console/rows/GREET"), chromedp.WaitVisible(chromedp.ID("disable")),
		chromedp.Click(chromedp.ID("disable")), chromedp.WaitVisible(chromedp.ID("enable")))
	if row, _, _ := n.Projector().Row("GREET"); row.Enabled != 0 {
		t.Fatalf("disabled row %+v", row)
	}
	b.do("delete", chromedp.Click(chromedp.ID("delete")), chromedp.WaitVisible(chromedp.ID("deleteform")),
		chromedp.SendKeys(chromedp.ID("confirm"), "GREET"))
	b.shot("delete")
	b.do("confirm", chromedp.Click(chromedp.ID("confirm-delete")), chromedp.WaitVisible(chromedp.ID("rows")),
		chromedp.WaitNotPresent(chromedp.ID("row-GREET")))
	if code, _ := nodetest.Do(t, n, "GET", "/api/directory/GREET", ""); code != 404 {
		t.Fatalf("deleted row: %d", code)
	}
}

// dispatch invokes key over the REST API as the owner and returns the invocation id.
func dispatch(t *testing.T, n *capdir.Node, key, body string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"key": key, "body": body})
	code, out := nodetest.Do(t, n, "POST", "/api/dispatch", string(b))
	var a struct {
		Proof struct {
			InvocationID string `json:"invocation_id"`
		} `json:"proof"`
	}
	if code != 200 || json.Unmarshal([]byte(out), &a) != nil || a.Proof.InvocationID == "" {
		t.Fatalf("dispatch %s: %d %s", key, code, out)
	}
	return a.Proof.InvocationID
}

// A call made over the REST API while the receipts page is open appears on it
// without a reload; its page shows the fingerprints and the public link.
func TestBrowserReceiptArrivesLive(t *testing.T) {
	n := startNode(t)
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", greetRow); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	b := openTab(t, n)
	b.signIn()
	b.open("/console/receipts", "#receipts")
	inv := dispatch(t, n, "GREET", "Ada")
	link := fmt.Sprintf(`#receipts a[href="/console/receipts/%s"]`, inv)
	b.do("the receipt arrives", chromedp.WaitVisible(chromedp.CSS(link)))
	b.shot("receipts")
	b.do("open it", chromedp.Click(chromedp.CSS(link)), chromedp.WaitVisible(chromedp.ID("public-link")))
	rc := ownerReceipt(t, n, inv)
	html := b.page()
	for _, want := range []string{rc.Fingerprints.Contract, rc.Fingerprints.Input, rc.Fingerprints.Output, "/receipt/" + inv} {
		if !strings.Contains(html, want) {
			t.Errorf("receipt page lacks %q", want)
		}
	}
	b.shot("receipt")
}

// A flow's receipt page shows its steps' receipts nested under it.
func TestBrowserFlowTree(t *testing.T) {
	n := startNode(t)
	for _, row := range []string{greetRow,
		`{"key":"TWICE","type":"flow","content":"# WHAT: greets twice\nGREET: $1 > GREET: $PREV"}`} {
		if code, body := nodetest.Do(t, n, "POST", "/api/directory", row); code != 201 {
			t.Fatalf("create: %d %s", code, body)
		}
	}
	inv := dispatch(t, n, "TWICE", "Ada")
	if rc := ownerReceipt(t, n, inv); len(rc.Children) != 2 {
		t.Fatalf("flow receipt %+v: want two steps", rc)
	}
	rc := ownerReceipt(t, n, inv)
	b := openTab(t, n)
	b.signIn()
	b.open("/console/receipts/"+inv, "#tree")
	for _, child := range rc.Children {
		b.do("step "+child, chromedp.WaitVisible(chromedp.CSS(`#tree .steps a[href="/console/receipts/`+child+`"]`)))
	}
	b.shot("flow-tree")
}

// A token holder's call to a sensitive row waits; approved from the page, the
// caller gets its result; a second, denied, is refused.
func TestBrowserApprovals(t *testing.T) {
	n := startNode(t)
	if code, body := nodetest.Do(t, n, "POST", "/api/directory",
		`{"key":"PAY","type":"fn","target":"echo","sensitive":1,"input_schema":"{\"type\":\"string\"}","content":"# WHAT: Pay an amount.\n# ARGS: $1=amount\n[\"paid $1\"]"}`); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	code, out := nodetest.Do(t, n, "POST", "/api/tokens", `{"sub":"billing-agent","scope":{"keys":["PAY"]},"risk":"high"}`)
	var tok struct{ Token string }
	if code != 201 || json.Unmarshal([]byte(out), &tok) != nil {
		t.Fatalf("mint: %d %s", code, out)
	}
	b := openTab(t, n)
	b.signIn()
	b.open("/console/approvals", "#no-approvals")
	for _, tc := range []struct{ decision, amount, want string }{
		{"approve", "10", "PROVEN_MATERIAL_RESULT"},
		{"deny", "99", "REFUSED_APPROVAL_DENIED"},
	} {
		done := make(chan string, 1)
		inv := holdCall(t, n, tok.Token, tc.amount)
		go func() { done <- awaitReceipt(n, tok.Token, inv) }()
		button := "#" + tc.decision + "-" + inv
		b.do("the held call appears", chromedp.WaitVisible(chromedp.CSS(button)))
		if !strings.Contains(b.text("#approval-"+inv), tc.amount) || !strings.Contains(b.text("#approval-"+inv), "token:billing-agent") {
			t.Errorf("approval shows %q, want the arguments and who asked", b.text("#approval-"+inv))
		}
		b.shot("approvals-" + tc.decision)
		b.do(tc.decision, chromedp.Click(chromedp.CSS(button)), chromedp.WaitVisible(chromedp.ID("notice")))
		if got := <-done; got != tc.want {
			t.Errorf("%s: the caller got %s, want %s", tc.decision, got, tc.want)
		}
	}
	rc := ownerReceiptResult(t, n, "PAY")
	if !strings.Contains(rc, "paid 10") {
		t.Errorf("approved call's result %q", rc)
	}
}

// holdCall is a token holder's call to PAY: held for approval (202).
func holdCall(t *testing.T, n *capdir.Node, tok, amount string) string {
	t.Helper()
	code, out := nodetest.DoToken(t, n, "POST", "/api/dispatch", `{"key":"PAY","body":"`+amount+`"}`, tok)
	var h struct {
		Status       string `json:"status"`
		InvocationID string `json:"invocation_id"`
	}
	if code != 202 || json.Unmarshal([]byte(out), &h) != nil || h.Status != "PENDING_APPROVAL" {
		t.Fatalf("token holder's call: %d %s, want 202 PENDING_APPROVAL", code, out)
	}
	return h.InvocationID
}

// awaitReceipt is the token holder waiting for its call's outcome, as a caller
// does: GET /api/dispatch?receipt=…&wait= with its own token, which blocks until
// the receipt comes (asked again while it answers 202, still held). It returns the
// receipt's status.
func awaitReceipt(n *capdir.Node, tok, inv string) string {
	ctx, cancel := context.WithTimeout(context.Background(), browserWait)
	defer cancel()
	for {
		req, err := http.NewRequestWithContext(ctx, "GET", n.URL()+"/api/dispatch?receipt="+inv+"&wait=30s", nil)
		if err != nil {
			return err.Error()
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err.Error()
		}
		var a struct {
			Status string `json:"status"`
			Proof  struct {
				Status string `json:"status"`
			} `json:"proof"`
		}
		err = json.NewDecoder(resp.Body).Decode(&a)
		resp.Body.Close()
		switch {
		case err != nil:
			return fmt.Sprintf("%d %v", resp.StatusCode, err)
		case resp.StatusCode == http.StatusAccepted:
			continue // still held: wait again
		case a.Proof.Status != "":
			return a.Proof.Status
		}
		return a.Status
	}
}

// ownerReceipt is inv's receipt as GET /api/receipts/{id} answers the owner.
func ownerReceipt(t *testing.T, n *capdir.Node, inv string) wire.Receipt {
	t.Helper()
	code, out := nodetest.Do(t, n, "GET", "/api/receipts/"+inv, "")
	var rc wire.Receipt
	if code != 200 || json.Unmarshal([]byte(out), &rc) != nil {
		t.Fatalf("GET /api/receipts/%s: %d %s", inv, code, out)
	}
	return rc
}

// ownerReceiptResult is the results of key's newest receipts, as GET
// /api/receipts?key= answers the owner.
func ownerReceiptResult(t *testing.T, n *capdir.Node, key string) string {
	t.Helper()
	code, out := nodetest.Do(t, n, "GET", "/api/receipts?key="+key, "")
	var a struct{ Receipts []wire.Receipt }
	if code != 200 || json.Unmarshal([]byte(out), &a) != nil {
		t.Fatalf("GET /api/receipts?key=%s: %d %s", key, code, out)
	}
	var results []string
	for _, rc := range a.Receipts {
		results = append(results, rc.Result)
	}
	return strings.Join(results, "\n")
}

// Eight refused credentials open a row's breaker; the page resets it, and the
// next call reaches the upstream.
func TestBrowserBreakerReset(t *testing.T) {
	status := http.StatusUnauthorized
	up := upstreamtest.Start(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status) })
	n := nodetest.Start(t, func(c *capdir.Config) {
		c.SecretEnv = []string{"UP_TOKEN"}
	}, capdir.WithEnv(func(name string) (string, bool) { return "token-one", name == "UP_TOKEN" }))
	row, _ := json.Marshal(map[string]any{"key": "THING", "type": "http", "target": "GET " + up.URL + "/thing?q=$1", "auth": "bearer:UP_TOKEN",
		"content": "# WHAT: Fetch a thing.\n# ARGS: $1=query"})
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", string(row)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	for range 3 {
		dispatch(t, n, "THING", "x")
	}
	b := openTab(t, n)
	b.signIn()
	b.open("/console/breakers", "#striking #reset-THING")
	if got := b.text("#striking"); !strings.Contains(got, "THING") || !strings.Contains(got, "3") {
		t.Errorf("striking breakers %q, want THING with 3 failures", got)
	}
	for range 5 {
		dispatch(t, n, "THING", "x")
	}
	b.do("the breaker opens on the page", chromedp.WaitVisible(chromedp.CSS("#breakers #reset-THING")), chromedp.WaitVisible(chromedp.ID("no-striking")))
	if code, body := nodetest.Do(t, n, "GET", "/api/breaker/THING", ""); code != 200 || !strings.Contains(body, `"open":true`) {
		t.Fatalf("breaker after 8 refusals: %d %s", code, body)
	}
	b.shot("breakers")
	b.do("reset", chromedp.Click(chromedp.ID("reset-THING")), chromedp.WaitVisible(chromedp.ID("no-breakers")))
	if got := b.text("#notice"); got != "Reset the breaker of THING." {
		t.Errorf("notice %q", got)
	}
	if code, body := nodetest.Do(t, n, "GET", "/api/breaker/THING", ""); code != 200 || !strings.Contains(body, `"open":false`) {
		t.Fatalf("breaker after the reset: %d %s", code, body)
	}
	// The health page lists the failed calls, and the bus identities.
	if _, _, err := eventlog.AddBusClient(n.Config().Log.DataDir, eventlog.BusClient{Name: "billing", Role: eventlog.RoleClient}, time.Now()); err != nil {
		t.Fatal(err)
	}
	b.open("/console/health", "#failures")
	if got := b.text("#failures"); !strings.Contains(got, "THING") {
		t.Errorf("last failures %q, want THING's", got)
	}
	if got := b.text("#bus"); !strings.Contains(got, "billing") || !strings.Contains(got, "client") {
		t.Errorf("bus clients %q, want billing", got)
	}
	b.shot("health")
	status = http.StatusOK
	inv := dispatch(t, n, "THING", "x")
	if rc := ownerReceipt(t, n, inv); rc.Status != wire.StatusProvenMaterialResult {
		t.Fatalf("call after the reset: %+v", rc)
	}
}

// A token minted on the page is shown once and works; revoked on the page, it is
// refused.
func TestBrowserTokenMintAndRevoke(t *testing.T) {
	n := startNode(t)
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", greetRow); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	b := openTab(t, n)
	b.signIn()
	b.open("/console/tokens", "#mint")
	b.do("mint", chromedp.SendKeys(chromedp.ID("t-sub"), "greeter"), chromedp.SetValue(chromedp.ID("t-keys"), "GREET"),
		chromedp.SetValue(chromedp.ID("t-ttl"), "600"), chromedp.Click(chromedp.ID("mint-submit")), chromedp.WaitVisible(chromedp.ID("minted-token")))
	raw, err := chromedp.Run(b.ctx, chromedp.Value(chromedp.ID("minted-token")))
	if err != nil {
		t.Fatal(err)
	}
	jti := b.text("#minted-jti")
	b.shot("tokens-minted")
	if code, out := nodetest.DoToken(t, n, "POST", "/api/dispatch", `{"key":"GREET","body":"Ada"}`, strings.TrimSpace(raw)); code != 200 {
		t.Fatalf("the minted token's call: %d %s", code, out)
	}
	b.do("the token is shown once", chromedp.Navigate(b.base+"/console/tokens"), chromedp.WaitVisible(chromedp.ID("mint")))
	if strings.Contains(b.page(), strings.TrimSpace(raw)) {
		t.Fatal("the tokens page shows the token again")
	}
	b.do("revoke", chromedp.SendKeys(chromedp.ID("t-jti"), jti), chromedp.Click(chromedp.ID("revoke-submit")), chromedp.WaitVisible(chromedp.ID("notice")))
	if !n.Projector().Revoked(jti) {
		t.Fatal("not revoked")
	}
	if code, out := nodetest.DoToken(t, n, "POST", "/api/dispatch", `{"key":"GREET","body":"Ada"}`, strings.TrimSpace(raw)); code != 401 || !strings.Contains(out, "REFUSED_TOKEN") {
		t.Fatalf("the revoked token's call: %d %s", code, out)
	}
	b.shot("tokens-revoked")
}
