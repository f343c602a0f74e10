package e2e_test

import (
	"context"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Capability tokens end to end: a real node (embedded NATS, bbolt, HTTP), tokens
// minted through POST /api/tokens and presented as Authorization: Bearer, or
// inside a request on the bus.

// tokRow writes a row through the owner's POST /api/directory.
func tokRow(t *testing.T, n *capdir.Node, row map[string]any) {
	t.Helper()
	if row["content"] == nil {
		row["content"] = "# WHAT: Say something back.\n# ARGS: $1=text\n# EX: [" + row["key"].(string) + "]x[/" + row["key"].(string) + "]"
	}
	b, _ := json.Marshal(row)
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", string(b)); code != 201 {
		t.Fatalf("POST row: %d %s", code, body)
	}
}

// mintAnswer is POST /api/tokens's answer.
type mintAnswer struct {
	Token  string `json:"token"`
	JTI    string `json:"jti"`
	Exp    int64  `json:"exp"`
	Claims struct {
		Subject string `json:"sub"`
		Pin     string `json:"pin"`
		Risk    string `json:"risk"`
	} `json:"claims"`
}

// mint mints a token through the owner's POST /api/tokens.
func mint(t *testing.T, n *capdir.Node, req string) mintAnswer {
	t.Helper()
	code, body := nodetest.Do(t, n, "POST", "/api/tokens", req)
	if code != 201 {
		t.Fatalf("POST /api/tokens %s: %d %s", req, code, body)
	}
	var a mintAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil || a.Token == "" || a.JTI == "" {
		t.Fatalf("mint answer %s: %v", body, err)
	}
	return a
}

// tokAnswer is a dispatch's answer, admitted or refused.
type tokAnswer struct {
	code         int
	body         string
	OK           bool   `json:"ok"`
	Ran          bool   `json:"ran"`
	Result       string `json:"result"`
	Error        string `json:"error"`
	Status       string `json:"status"`
	InvocationID string `json:"invocation_id"`
	Proof        struct {
		InvocationID string `json:"invocation_id"`
		Status       string `json:"status"`
	} `json:"proof"`
}

// dispatchWith dispatches key with body, presenting tok as a bearer token.
func dispatchWith(t *testing.T, n *capdir.Node, tok, key, body string) tokAnswer {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"key": key, "body": body})
	code, out := nodetest.DoToken(t, n, "POST", "/api/dispatch", string(b), tok)
	a := tokAnswer{code: code, body: out}
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("dispatch answer %d %q: %v", code, out, err)
	}
	a.code, a.body = code, out
	return a
}

// mustAdmit checks a token's dispatch ran and returns its invocation id.
func mustAdmit(t *testing.T, a tokAnswer, result string) string {
	t.Helper()
	if a.code != 200 || !a.OK || !a.Ran || a.Result != result {
		t.Fatalf("dispatch: %d %s; want 200 with result %q", a.code, a.body, result)
	}
	return a.Proof.InvocationID
}

// mustDeny checks a token's dispatch was refused with the HTTP status and the
// literal reason in "error", and that nothing ran.
func mustDeny(t *testing.T, a tokAnswer, code int, reason string) {
	t.Helper()
	if a.code != code || a.Error != reason || a.Ran || a.OK {
		t.Fatalf("dispatch: %d %s; want %d with error %q", a.code, a.body, code, reason)
	}
}

// ownerReceipt reads a receipt with the owner key.
func ownerReceipt(t *testing.T, n *capdir.Node, inv string) wire.Receipt {
	t.Helper()
	code, body := nodetest.Do(t, n, "GET", "/api/receipts/"+inv, "")
	var rc wire.Receipt
	if code != 200 || json.Unmarshal([]byte(body), &rc) != nil {
		t.Fatalf("GET /api/receipts/%s: %d %s", inv, code, body)
	}
	return rc
}

// lastSeqs is each stream's last sequence, to check that nothing was appended.
func lastSeqs(t *testing.T, n *capdir.Node) map[string]uint64 {
	t.Helper()
	m := map[string]uint64{}
	for _, s := range wire.Streams {
		seq, err := n.Log().LastSeq(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		m[s] = seq
	}
	return m
}

func mustAppendNothing(t *testing.T, n *capdir.Node, before map[string]uint64, what string) {
	t.Helper()
	if after := lastSeqs(t, n); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("%s appended: %v -> %v", what, before, after)
	}
}

// A low token runs an ordinary row, and is refused a sensitive one (403,
// risk_ceiling:low<row:high) with a receipt whose actor is token:<sub> and which
// holds nothing of the token; a high token runs it.
func TestTokenRiskCeiling(t *testing.T) {
	n := nodetest.Start(t, nil)
	tokRow(t, n, map[string]any{"key": "SAY", "type": "fn", "target": "echo"})
	tokRow(t, n, map[string]any{"key": "PAY", "type": "fn", "target": "echo", "sensitive": 1, "input_schema": `{"type":"string"}`})
	low := mint(t, n, `{"sub":"billing-agent","scope":{"keys":["SAY","PAY"]}}`)
	if low.Claims.Risk != "low" {
		t.Fatalf("default risk = %q, want low", low.Claims.Risk)
	}
	mustAdmit(t, dispatchWith(t, n, low.Token, "SAY", "hi"), "hi")

	a := dispatchWith(t, n, low.Token, "PAY", "10")
	mustDeny(t, a, 403, "risk_ceiling:low<row:high")
	if a.Status != wire.StatusRefusedScope || a.InvocationID == "" {
		t.Fatalf("refusal answer %s: want the receipt's status and invocation id", a.body)
	}
	rc := ownerReceipt(t, n, a.InvocationID)
	if rc.Actor != "token:billing-agent" || rc.Status != wire.StatusRefusedScope || rc.Result != "risk_ceiling:low<row:high" || rc.Ran {
		t.Fatalf("receipt = %+v", rc)
	}
	if raw, _ := json.Marshal(rc); strings.Contains(string(raw), low.Token) || strings.Contains(string(raw), strings.Split(low.Token, ".")[2]) {
		t.Fatal("the receipt holds the token")
	}

	// A high token passes the ceiling; the row being sensitive, the call then waits
	// for the owner's approval (watcher_test.go).
	high := mint(t, n, `{"sub":"billing-agent","scope":{"keys":["PAY"]},"risk":"high"}`)
	held := dispatchWith(t, n, high.Token, "PAY", "10")
	if held.code != 202 || held.Status != wire.StatusPendingApproval {
		t.Fatalf("high token on a sensitive row: %d %s; want 202 %s", held.code, held.body, wire.StatusPendingApproval)
	}
	inv := held.InvocationID
	if code, body := nodetest.Do(t, n, "POST", "/api/approvals/"+inv, `{"decision":"approve"}`); code != 200 {
		t.Fatalf("approve: %d %s", code, body)
	}
	if rc := ownerReceipt(t, n, inv); rc.Actor != "token:billing-agent" || rc.Status != wire.StatusProvenMaterialResult {
		t.Fatalf("receipt = %+v", rc)
	}
}

// A token pinned to a row's contract keeps working after a documentation-only
// edit (examples) and is refused with 409 after a contract edit (target).
func TestTokenPinnedToContract(t *testing.T) {
	n := nodetest.Start(t, nil)
	tokRow(t, n, map[string]any{"key": "SAY", "type": "fn", "target": "echo"})
	pinned := mint(t, n, `{"sub":"agent-7","scope":{"keys":["SAY"]},"pin":"current"}`)
	row, _, err := n.Projector().Row("SAY")
	if err != nil {
		t.Fatal(err)
	}
	if want := contract.Fingerprint(&row); pinned.Claims.Pin != want {
		t.Fatalf(`"pin":"current" pinned %q, want the row's fingerprint %q`, pinned.Claims.Pin, want)
	}
	mustAdmit(t, dispatchWith(t, n, pinned.Token, "SAY", "a"), "a")

	if code, body := nodetest.Do(t, n, "PATCH", "/api/directory/SAY", `{"examples":["Ada","Grace"]}`); code != 200 {
		t.Fatalf("PATCH examples: %d %s", code, body)
	}
	mustAdmit(t, dispatchWith(t, n, pinned.Token, "SAY", "b"), "b")

	if code, body := nodetest.Do(t, n, "PATCH", "/api/directory/SAY", `{"target":"ECHO"}`); code != 200 {
		t.Fatalf("PATCH target: %d %s", code, body)
	}
	row, _, _ = n.Projector().Row("SAY")
	current := contract.Fingerprint(&row)
	if current == pinned.Claims.Pin {
		t.Fatal("precondition: the target edit left the fingerprint unchanged")
	}
	a := dispatchWith(t, n, pinned.Token, "SAY", "c")
	mustDeny(t, a, 409, "contract_changed:"+pinned.Claims.Pin+"!="+current)
	if a.Status != wire.StatusRefusedContractChanged {
		t.Fatalf("status %q", a.Status)
	}
	// The owner is not pinned.
	if code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"SAY","body":"d"}`); code != 200 || !strings.Contains(body, `"result":"d"`) {
		t.Fatalf("owner dispatch: %d %s", code, body)
	}
}

// A token refused for its scope is refused before anything runs: the upstream of
// an http row outside the scope is never called, and a key with no row is refused
// alike, so a token holder cannot tell one from the other.
func TestTokenOutsideScopeNeverReachesTheUpstream(t *testing.T) {
	up := newBrkUpstream(t, always(200))
	n := nodetest.Start(t, nil)
	tokRow(t, n, map[string]any{"key": "SAY", "type": "fn", "target": "echo", "category": "chat"})
	tokRow(t, n, map[string]any{"key": "API", "type": "http", "target": "GET " + up.URL + "/v1?q=$1", "category": "tools"})
	byKey := mint(t, n, `{"sub":"agent-7","scope":{"keys":["SAY"]}}`)
	byCategory := mint(t, n, `{"sub":"agent-7","scope":{"categories":["chat"]}}`)
	for _, tok := range []string{byKey.Token, byCategory.Token} {
		mustAdmit(t, dispatchWith(t, n, tok, "SAY", "in scope"), "in scope")
		mustDeny(t, dispatchWith(t, n, tok, "API", "x"), 403, "scope:API")
		mustDeny(t, dispatchWith(t, n, tok, "NOPE", "x"), 403, "scope:NOPE")
	}
	if h := up.Hits(); h != 0 {
		t.Fatalf("the upstream was called %d times", h)
	}
	// The owner reaches it.
	if code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"API","body":"x"}`); code != 200 || up.Hits() != 1 {
		t.Fatalf("owner dispatch: %d %s, hits %d", code, body, up.Hits())
	}
}

// A disabled row, which discovery hides from every token, is answered to a token
// reaching it through its category as a key with no row is (403 scope:<KEY>, the
// same answer but for the key and the call's ids), over POST and GET; the owner,
// and a token naming the key, are still told ERR:disabled:<KEY>.
func TestTokenCategoryDisabledRowAnsweredAsNoRow(t *testing.T) {
	n := nodetest.Start(t, nil)
	tokRow(t, n, map[string]any{"key": "SAY", "type": "fn", "target": "echo", "category": "chat"})
	tokRow(t, n, map[string]any{"key": "OFF", "type": "fn", "target": "echo", "category": "chat", "enabled": 0})
	byCategory := mint(t, n, `{"sub":"agent-7","scope":{"categories":["chat"]}}`)
	byKey := mint(t, n, `{"sub":"agent-7","scope":{"keys":["OFF"]}}`)
	mustAdmit(t, dispatchWith(t, n, byCategory.Token, "SAY", "in scope"), "in scope")

	ids := regexp.MustCompile(`"(invocation_id|trace)":"[^"]*"`)
	bare := func(a tokAnswer, key string) string {
		return strings.ReplaceAll(ids.ReplaceAllString(a.body, `"$1":"…"`), key, "KEY")
	}
	off, none := dispatchWith(t, n, byCategory.Token, "OFF", "x"), dispatchWith(t, n, byCategory.Token, "NOPE", "x")
	mustDeny(t, off, 403, "scope:OFF")
	mustDeny(t, none, 403, "scope:NOPE")
	if bare(off, "OFF") != bare(none, "NOPE") {
		t.Fatalf("the disabled row and no row are answered apart:\n%s\n%s", off.body, none.body)
	}
	for _, key := range []string{"OFF", "NOPE"} {
		code, body := nodetest.DoToken(t, n, "GET", "/api/dispatch?key="+key+"&body=x", "", byCategory.Token)
		if code != 403 || !strings.Contains(body, `"error":"scope:`+key+`"`) {
			t.Fatalf("GET %s: %d %s; want 403 scope:%s", key, code, body, key)
		}
	}
	if rc := ownerReceipt(t, n, off.InvocationID); rc.Status != wire.StatusRefusedScope || rc.Result != "scope:OFF" || rc.Ran {
		t.Fatalf("the refusal's receipt: %+v", rc.ReceiptSummary)
	}

	// The token naming the key, and the owner, are told the row is disabled.
	if a := dispatchWith(t, n, byKey.Token, "OFF", "x"); a.OK || a.Ran || a.Result != "ERR:disabled:OFF" {
		t.Fatalf("a token naming OFF: %d %s; want ERR:disabled:OFF", a.code, a.body)
	}
	if code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"OFF","body":"x"}`); !strings.Contains(body, `"result":"ERR:disabled:OFF"`) {
		t.Fatalf("owner dispatch: %d %s; want ERR:disabled:OFF", code, body)
	}
}

// An expired token is refused (401 token:expired) before anything is appended;
// the node's clock decides, for the facade and the gate alike.
func TestTokenExpired(t *testing.T) {
	clock := &brkClock{now: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	n := nodetest.Start(t, nil, capdir.WithClock(clock.Now))
	tokRow(t, n, map[string]any{"key": "SAY", "type": "fn", "target": "echo"})
	m := mint(t, n, `{"sub":"agent-7","scope":{"keys":["SAY"]},"ttl_seconds":60}`)
	if want := clock.Now().Add(time.Minute).Unix(); m.Exp != want {
		t.Fatalf("exp = %d, want %d", m.Exp, want)
	}
	mustAdmit(t, dispatchWith(t, n, m.Token, "SAY", "now"), "now")
	clock.advance(time.Minute) // at exp: within the 5 s leeway
	mustAdmit(t, dispatchWith(t, n, m.Token, "SAY", "at exp"), "at exp")

	clock.advance(5 * time.Second) // exp + leeway
	before := lastSeqs(t, n)
	mustDeny(t, dispatchWith(t, n, m.Token, "SAY", "late"), 401, "token:expired")
	mustAppendNothing(t, n, before, "an expired token's dispatch")
	// A token longer-lived than the minter allows is not minted.
	if code, body := nodetest.Do(t, n, "POST", "/api/tokens", `{"sub":"a","scope":{"keys":["SAY"]},"ttl_seconds":3601}`); code != 400 || !strings.Contains(body, "ttl over the maximum") {
		t.Fatalf("ttl 3601: %d %s", code, body)
	}
}

// A token can dispatch; it can never write the directory, mint, revoke, read owner
// receipts or reset breakers: every owner route answers a bearer token 401 saying
// it needs the owner key, and appends nothing.
func TestTokenOnOwnerRoutesRefused(t *testing.T) {
	n := nodetest.Start(t, nil)
	tokRow(t, n, map[string]any{"key": "SAY", "type": "fn", "target": "echo"})
	m := mint(t, n, `{"sub":"agent-7","scope":{"keys":["SAY"]}}`)
	inv := mustAdmit(t, dispatchWith(t, n, m.Token, "SAY", "x"), "x")
	const want = `{"error":"unauthorized","how_to_fix":"this route needs the owner key in the x-terminal-key header; ` +
		`a capability token (Authorization: Bearer) may only call and read the rows in its scope: /api/dispatch (a call, format=, registry=1, ask=, and receipt= for its own calls) and /mcp"}`
	if err := nodetest.CatchUp(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	before := lastSeqs(t, n)
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/api/directory", ""},
		{"GET", "/api/directory/SAY", ""},
		{"POST", "/api/directory", `{"key":"NEW","type":"fn","target":"echo","content":"# WHAT: x"}`},
		{"PUT", "/api/directory/SAY", `{"key":"SAY","type":"fn","target":"echo","content":"# WHAT: x"}`},
		{"PATCH", "/api/directory/SAY", `{"target":"now"}`},
		{"DELETE", "/api/directory/SAY", ""},
		{"POST", "/api/directory/import", `[{"key":"NEW","type":"fn","target":"echo","content":"# WHAT: x"}]`},
		{"POST", "/api/tokens", `{"sub":"agent-8","scope":{"keys":["SAY"]}}`},
		{"DELETE", "/api/tokens/" + m.JTI, ""},
		{"GET", "/api/receipts/" + inv, ""},
		{"GET", "/api/receipts?key=SAY", ""},
		{"GET", "/api/breaker", ""},
		{"DELETE", "/api/breaker/SAY", ""},
	} {
		code, body := nodetest.DoToken(t, n, r.method, r.path, r.body, m.Token)
		if code != 401 || strings.TrimSpace(body) != want {
			t.Errorf("%s %s with a token: %d %s", r.method, r.path, code, body)
		}
	}
	mustAppendNothing(t, n, before, "a token on an owner route")
	// The token is still good for what it may do.
	mustAdmit(t, dispatchWith(t, n, m.Token, "SAY", "y"), "y")
}

// Hostile or mistaken credentials on dispatch are refused with what to fix, and
// nothing is appended; a token whose subject is the owner is never minted.
// flipS is an ES256 signature segment with S replaced by N-S: the same signature in
// the other form ECDSA verifies.
func flipS(t *testing.T, seg string) string {
	t.Helper()
	sig, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil || len(sig) != 64 {
		t.Fatalf("signature %q: %v", seg, err)
	}
	s := new(big.Int).SetBytes(sig[32:])
	s.Sub(elliptic.P256().Params().N, s).FillBytes(sig[32:])
	return base64.RawURLEncoding.EncodeToString(sig)
}

// unusedBits is the last character of seg with the unused low bits it carries set:
// base64url decodes seg the same with it. seg's length must leave bits unused.
func unusedBits(t *testing.T, seg string) string {
	t.Helper()
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	if len(seg)%4 == 0 {
		t.Fatalf("segment of %d characters has no unused bits", len(seg))
	}
	c := alphabet[strings.IndexByte(alphabet, seg[len(seg)-1])|1]
	a, _ := base64.RawURLEncoding.DecodeString(seg)
	b, err := base64.RawURLEncoding.DecodeString(seg[:len(seg)-1] + string(c))
	if err != nil || string(a) != string(b) || c == seg[len(seg)-1] {
		t.Fatalf("segment %q: the variant does not decode the same (%v)", seg, err)
	}
	return string(c)
}

// Refused credentials append nothing, and each gets its literal; a minted token has
// one string (the same signature with S as N-S, or with base64url's unused bits set,
// is refused). Refused mints say what to fix.
func TestTokenBadCredentialsAndMints(t *testing.T) {
	n := nodetest.Start(t, nil)
	tokRow(t, n, map[string]any{"key": "SAY", "type": "fn", "target": "echo"})
	good := mint(t, n, `{"sub":"agent-7","scope":{"keys":["SAY"]}}`)
	before := lastSeqs(t, n)
	seg := strings.Split(good.Token, ".")
	for _, c := range []struct {
		name, header string
		code         int
		want         string
	}{
		{"garbage", "Bearer garbage", 401, "token:malformed"},
		{"tampered", "Bearer " + seg[0] + "." + seg[1] + "." + seg[2][:len(seg[2])-4] + "AAAA", 401, "token:bad_signature"},
		{"high S", "Bearer " + seg[0] + "." + seg[1] + "." + flipS(t, seg[2]), 401, "token:bad_signature"},
		{"unused bits", "Bearer " + seg[0] + "." + seg[1] + "." + seg[2][:len(seg[2])-1] + unusedBits(t, seg[2]), 401, "token:malformed"},
		{"alg none", "Bearer " + base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "." + seg[1] + ".", 401, "token:alg_not_es256"},
		{"not bearer", "Basic " + good.Token, 401, "token:malformed"},
		{"empty", "Bearer ", 401, "token:malformed"},
		{"two tokens", "Bearer " + good.Token + " " + good.Token, 401, "token:malformed"},
		{"oversized", "Bearer " + strings.Repeat("a", 9000), 401, "token:malformed"},
	} {
		code, body := doHeader(t, n, "Authorization", c.header)
		var a struct {
			Error string `json:"error"`
		}
		json.Unmarshal([]byte(body), &a)
		if code != c.code || a.Error != c.want {
			t.Errorf("%s: %d %s; want %d %s", c.name, code, body, c.code, c.want)
		}
	}
	// Both credentials at once: 400, say which to send.
	code, body := doHeader(t, n, "Authorization", "Bearer "+good.Token, "x-terminal-key", nodetest.Key)
	if code != 400 || !strings.Contains(body, "not both") {
		t.Errorf("both credentials: %d %s", code, body)
	}
	for _, c := range []struct{ req, want string }{
		{`{"sub":"owner","scope":{"keys":["SAY"]}}`, "subject may not be the owner"},
		{`{"sub":"OWNER:terminal-key","scope":{"keys":["SAY"]}}`, "subject may not be the owner"},
		{`{"sub":"a","scope":{}}`, "scope must name at least one key or category"},
		{`{"sub":"a","scope":{"keys":["a.b"]}}`, "bad scope entry"},
		{`{"sub":"a","scope":{"keys":["SAY"]},"risk":"medium"}`, `risk must be "low" or "high"`},
		{`{"sub":"a","scope":{"keys":["SAY"]},"ttl_seconds":-1}`, "ttl_seconds -1 is negative"},
		{`{"sub":"a","scope":{"keys":["SAY"]},"ttl_seconds":"60"}`, `"ttl_seconds" must be a whole number of seconds`},
		{`{"sub":"a","scope":{"keys":["SAY","X"]},"pin":"current"}`, `"pin":"current" pins the contract of the token's one key`},
		{`{"sub":"a","scope":{"keys":["GONE"]},"pin":"current"}`, `there is no row "GONE"`},
		{`{"sub":"a","scope":{"keys":["SAY"]},"admin":true}`, `unknown field "admin"`},
		{`{"sub":"a"`, "the body ends before its JSON object is closed"},
	} {
		code, body := nodetest.Do(t, n, "POST", "/api/tokens", c.req)
		var a struct {
			Error string `json:"error"`
		}
		if json.Unmarshal([]byte(body), &a); code != 400 || !strings.Contains(a.Error, c.want) {
			t.Errorf("mint %s: %d %s; want 400 naming %q", c.req, code, body, c.want)
		}
	}
	for _, jti := range []string{"a.b", strings.Repeat("f", 65)} {
		if code, body := nodetest.Do(t, n, "DELETE", "/api/tokens/"+jti, ""); code != 400 || !strings.Contains(body, "is not a token id") {
			t.Errorf("revoke %q: %d %s", jti, code, body)
		}
	}
	mustAppendNothing(t, n, before, "a refused credential or mint")
}

// doHeader is POST /api/dispatch {"key":"SAY"} with the given header pairs only.
func doHeader(t *testing.T, n *capdir.Node, kv ...string) (int, string) {
	t.Helper()
	req, err := newDispatchRequest(n)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	return sendRequest(t, req)
}

// Two nodes share one log and one signing key: a token minted on one works on the
// other, and once it is revoked on one it is refused on the other, even while that
// node's projection has not yet folded the revocation (its worker asks the log).
func TestTokenRevokedOnOneNodeRefusedOnAnother(t *testing.T) {
	var bCreds string
	a := nodetest.Start(t, func(c *capdir.Config) {
		c.Log.Listen = freePort(t)
		c.Name = "node-a"
		c.Dispatch.Workers = 2
		bCreds = addBusIdentity(t, c.Log.DataDir, "node-b", eventlog.RoleNode)
	})
	b := nodetest.Start(t, func(c *capdir.Config) {
		c.Log.NATSURL = a.Log().ClientURL()
		c.Log.Creds = bCreds
		c.TokenKeyFile = a.Config().TokenKeyFile
		c.Name = "node-b"
		c.Dispatch.Workers = 2
	})
	if a.Config().TokenAudience != b.Config().TokenAudience {
		t.Fatalf("audiences differ: %q, %q", a.Config().TokenAudience, b.Config().TokenAudience)
	}
	tokRow(t, a, map[string]any{"key": "SAY", "type": "fn", "target": "echo"})
	m := mint(t, a, `{"sub":"agent-7","scope":{"keys":["SAY"]}}`)
	mustAdmit(t, dispatchWith(t, b, m.Token, "SAY", "via b"), "via b")
	mustAdmit(t, dispatchWith(t, a, m.Token, "SAY", "via a"), "via a")

	// From here on only B's workers run requests, and B's projection folds the
	// control stream late: each control batch it applies is followed by a pause.
	a.Dispatcher().Close()
	var lag atomic.Bool
	paused := make(chan struct{}, 1)
	b.Projector().OnApplied(func(stream string, _ []eventlog.Stored) {
		if stream == wire.ControlStream && lag.Load() {
			select {
			case paused <- struct{}{}:
			default:
			}
			time.Sleep(300 * time.Millisecond)
		}
	})
	lag.Store(true)
	tokRow(t, a, map[string]any{"key": "OTHER", "type": "fn", "target": "echo"})
	<-paused // B has folded OTHER and pauses before its next control batch
	if code, body := nodetest.Do(t, a, "DELETE", "/api/tokens/"+m.JTI, ""); code != 200 || !strings.Contains(body, `"revoked":true`) {
		t.Fatalf("revoke on A: %d %s", code, body)
	}
	stale := b.Projector().Revoked(m.JTI)
	ans := dispatchWith(t, b, m.Token, "SAY", "after revoke")
	lag.Store(false)
	mustDeny(t, ans, 401, "token:revoked")
	t.Logf("B's projection held the revocation when the request entered: %v", stale)
	for range 2 {
		mustDeny(t, dispatchWith(t, a, m.Token, "SAY", "x"), 401, "token:revoked")
		mustDeny(t, dispatchWith(t, b, m.Token, "SAY", "x"), 401, "token:revoked")
	}
	// Revoking again appends nothing.
	before := lastSeqs(t, a)
	if code, body := nodetest.Do(t, a, "DELETE", "/api/tokens/"+m.JTI, ""); code != 200 {
		t.Fatalf("revoke again: %d %s", code, body)
	}
	mustAppendNothing(t, a, before, "a second revocation")
}

// busInvoke publishes req, as it is (whatever credential it claims), on the bus
// client's own request subject with the client's connection, and waits for its
// receipt notice.
func busInvoke(t *testing.T, bc *busClient, client string, req wire.InvocationRequest) wire.Receipt {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ev, err := wire.PrepareRequest(time.Now(), &req)
	if err != nil {
		t.Fatal(err)
	}
	notices := make(chan *nats.Msg, 1)
	sub, err := bc.nc.ChanSubscribe(wire.ReceiptNoticeSubject(client, req.Key, req.InvocationID), notices)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	js, err := jetstream.New(bc.nc)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(ev)
	if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: wire.BusRequestSubject(client, req.Key), Data: data}, jetstream.WithMsgID(ev.ID)); err != nil {
		t.Fatal(err)
	}
	var rc wire.Receipt
	select {
	case m := <-notices:
		var got wire.Event
		if err := json.Unmarshal(m.Data, &got); err != nil || got.DataAs(&rc) != nil {
			t.Fatalf("receipt notice %s: %v", m.Data, err)
		}
	case <-ctx.Done():
		t.Fatalf("no receipt for %s", req.InvocationID)
	}
	return rc
}

// A request carrying a token on a bus client's subject (published by a real bus
// client) passes the same gate as one over HTTP and gets the same literal reasons;
// without a token, a bus request is refused whatever credential it claims, the
// owner's included. Only capdir's own request subject believes the owner.
func TestTokenOverTheBusGatedLikeHTTP(t *testing.T) {
	up := newBrkUpstream(t, always(200))
	var seed string
	n := nodetest.Start(t, func(c *capdir.Config) {
		c.Log.Listen = "127.0.0.1:0"
		seed = addBusIdentity(t, c.Log.DataDir, "bus-test", eventlog.RoleClient)
	})
	bc := (&guardedNode{n: n, seeds: map[string]string{"bus-test": seed}}).connect(t, "bus-test")
	tokRow(t, n, map[string]any{"key": "SAY", "type": "fn", "target": "echo"})
	tokRow(t, n, map[string]any{"key": "PAY", "type": "fn", "target": "echo", "sensitive": 1, "input_schema": `{"type":"string"}`})
	tokRow(t, n, map[string]any{"key": "API", "type": "http", "target": "GET " + up.URL + "/v1?q=$1"})
	low := mint(t, n, `{"sub":"bus-agent","scope":{"keys":["SAY","PAY"]},"body":"fixed"}`)
	pinned := mint(t, n, `{"sub":"bus-agent","scope":{"keys":["SAY"]},"pin":"`+strings.Repeat("0", 64)+`"}`)
	small := mint(t, n, `{"sub":"bus-agent","scope":{"keys":["SAY"]},"max_payload":3}`)
	revoked := mint(t, n, `{"sub":"bus-agent","scope":{"keys":["SAY"]}}`)
	if code, body := nodetest.Do(t, n, "DELETE", "/api/tokens/"+revoked.JTI, ""); code != 200 {
		t.Fatalf("revoke: %d %s", code, body)
	}
	cases := []struct {
		name, tok, key, body string
		code                 int
		status, reason       string
	}{
		{"admitted", low.Token, "SAY", "fixed", 200, wire.StatusProvenMaterialResult, "fixed"},
		{"out of scope", low.Token, "API", "fixed", 403, wire.StatusRefusedScope, "scope:API"},
		{"risk", low.Token, "PAY", "fixed", 403, wire.StatusRefusedScope, "risk_ceiling:low<row:high"},
		{"fixed body", low.Token, "SAY", "other", 403, wire.StatusRefusedScope, "body_fixed:" + sum16("fixed") + "!=" + sum16("other")},
		{"pin", pinned.Token, "SAY", "x", 409, wire.StatusRefusedContractChanged, "contract_changed:" + strings.Repeat("0", 64) + "!=" + fingerprintOf(t, n, "SAY")},
		{"token payload", small.Token, "SAY", "abcd", 413, wire.StatusRefusedPayloadTooLarge, "payload_ceiling:4>3"},
		{"revoked", revoked.Token, "SAY", "x", 401, wire.StatusRefusedToken, "token:revoked"},
		{"malformed", "garbage", "SAY", "x", 401, wire.StatusRefusedToken, "token:malformed"},
	}
	for _, c := range cases {
		h := dispatchWith(t, n, c.tok, c.key, c.body)
		got := h.Error
		if c.code == 200 {
			got = h.Result
		}
		if h.code != c.code || got != c.reason {
			t.Errorf("%s over HTTP: %d %s; want %d %q", c.name, h.code, h.body, c.code, c.reason)
		}
		rc := busInvoke(t, bc, "bus-test", wire.InvocationRequest{Key: c.key, Body: c.body, Token: c.tok})
		if rc.Status != c.status || rc.Result != c.reason {
			t.Errorf("%s over the bus: %s %q; want %s %q", c.name, rc.Status, rc.Result, c.status, c.reason)
		}
		if c.code == 200 && rc.Actor != "token:bus-agent" {
			t.Errorf("%s over the bus: actor %q", c.name, rc.Actor)
		}
	}
	if h := up.Hits(); h != 0 {
		t.Fatalf("the upstream was called %d times", h)
	}
	// No token: refused, whatever the credential claims, the owner's attestation
	// included; the receipt names the client the subject names.
	for _, cred := range []string{"nats:bus-test", "owner", wire.OwnerActor, "token:bus-agent", "nats:other", ""} {
		rc := busInvoke(t, bc, "bus-test", wire.InvocationRequest{Key: "SAY", Body: "x", Credential: cred})
		if rc.Status != wire.StatusRefusedToken || rc.Result != "token:required" || rc.Ran || rc.Actor != "nats:bus-test" {
			t.Errorf("credential %q without a token: %+v", cred, rc)
		}
	}
	// The owner's attestation on capdir's own request subject is the owner.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc, err := n.Invoke(ctx, wire.InvocationRequest{Key: "PAY", Body: "x", Credential: wire.OwnerActor})
	if err != nil || rc.Status != wire.StatusProvenMaterialResult || rc.Actor != wire.OwnerActor {
		t.Errorf("owner on capdir's own subject: %+v, %v", rc, err)
	}
}

func fingerprintOf(t *testing.T, n *capdir.Node, key string) string {
	t.Helper()
	row, _, err := n.Projector().Row(key)
	if err != nil {
		t.Fatal(err)
	}
	return contract.Fingerprint(&row)
}

// newDispatchRequest is POST /api/dispatch {"key":"SAY","body":"x"} with no credential.
func newDispatchRequest(n *capdir.Node) (*http.Request, error) {
	req, err := http.NewRequest("POST", n.URL()+"/api/dispatch", strings.NewReader(`{"key":"SAY","body":"x"}`))
	if err != nil {
		return nil, err
	}
	req.Header.Set("content-type", "application/json")
	return req, nil
}

func sendRequest(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// sum16 is the first 16 hex digits of the SHA-256 of s.
func sum16(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// The signing key is created once, mode 0600, in the data dir (or the file
// --token-key names) and kept across restarts, so a token outlives a restart; a
// key file others may read is refused; a node told another audience refuses the
// tokens minted for this one.
func TestTokenSigningKeyFile(t *testing.T) {
	dir := t.TempDir()
	n := nodetest.Start(t, func(c *capdir.Config) { c.Log.DataDir = dir })
	path := capdir.TokenKeyPath(dir)
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 || n.Config().TokenKeyFile != path {
		t.Fatalf("key file %s: %v, mode %v; node uses %q", path, err, st.Mode(), n.Config().TokenKeyFile)
	}
	if !strings.HasPrefix(n.Config().TokenAudience, "capdir:") {
		t.Fatalf("audience %q", n.Config().TokenAudience)
	}
	tokRow(t, n, map[string]any{"key": "SAY", "type": "fn", "target": "echo"})
	m := mint(t, n, `{"sub":"agent-7","scope":{"keys":["SAY"]},"ttl_seconds":600}`)
	nodetest.CheckReplay(t, n)
	if err := n.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}

	again := nodetest.Start(t, func(c *capdir.Config) { c.Log.DataDir = dir })
	if again.Config().TokenAudience != n.Config().TokenAudience {
		t.Fatalf("audience changed across a restart: %q, %q", n.Config().TokenAudience, again.Config().TokenAudience)
	}
	mustAdmit(t, dispatchWith(t, again, m.Token, "SAY", "after restart"), "after restart")

	// Another deployment's audience, the same key: the token is not for it.
	other := nodetest.Start(t, func(c *capdir.Config) { c.TokenKeyFile = path; c.TokenAudience = "capdir:staging" })
	tokRow(t, other, map[string]any{"key": "SAY", "type": "fn", "target": "echo"})
	mustDeny(t, dispatchWith(t, other, m.Token, "SAY", "x"), 401, "token:audience:"+n.Config().TokenAudience)

	loose := filepath.Join(t.TempDir(), "loose.pem")
	if err := os.WriteFile(loose, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = capdir.Start(context.Background(), capdir.Config{TerminalKey: nodetest.Key, TokenKeyFile: loose, Log: eventlog.Config{DataDir: t.TempDir()}}, nodetest.Quiet())
	if err == nil || !strings.Contains(err.Error(), "--token-key") || !strings.Contains(err.Error(), "chmod 600 "+loose) {
		t.Fatalf("a key file others may read: %v", err)
	}
}
