package mcp_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/api/mcp"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

// The tools/call fast path, attacked by a token holder: a call of a row outside
// its scope is the gate's refusal (nothing runs); a call after its session was
// deleted is not answered with a result and dispatches nothing; a body over the
// limit by its id is 413; a batch is not run.
func TestFastPathAttackedByATokenHolder(t *testing.T) {
	n := nodetest.Start(t, nil)
	postRow(t, n, greetRow("GREET"))
	postRow(t, n, greetRow("OTHER"))
	tok, _ := mint(t, n, token.Scope{Keys: []string{"GREET"}}, time.Now(), time.Hour)
	cs := connect(t, n, bearer(tok), "", nil)
	id := cs.ID()
	hdr := []string{"Mcp-Session-Id", id, "Authorization", "Bearer " + tok, "Mcp-Protocol-Version", "2025-06-18"}

	code, _, body := post(t, n, "", toolsCall("7", "OTHER", `{"name":"x"}`, ""), hdr...)
	if code != 200 || !strings.Contains(body, `"isError":true`) || !strings.Contains(body, "scope:OTHER") || strings.Contains(body, "Hello") {
		t.Fatalf("a call of a row outside the token's scope: %d %s", code, body)
	}

	huge := `"` + strings.Repeat("i", 5<<20) + `"` // the body is over the 4 MiB a request may have
	code, _, body = post(t, n, "", toolsCall(huge, "GREET", `{"name":"x"}`, ""), hdr...)
	if code != http.StatusRequestEntityTooLarge || strings.Contains(body, "Hello") || len(body) > 1000 {
		t.Fatalf("a call with a 5 MiB id: %d %.200s; want 413, nothing run, the id not echoed", code, body)
	}
	code, _, body = post(t, n, "", "["+toolsCall("8", "GREET", `{"name":"x"}`, "")+","+toolsCall("9", "GREET", `{"name":"y"}`, "")+"]", hdr...)
	if code == 200 && strings.Count(body, "Hello") > 0 {
		t.Fatalf("a batch was run: %d %.300s", code, body)
	}

	nodetest.WaitDispatchIdle(t, n.Log())
	before, _ := n.Log().LastSeq(context.Background(), wire.DataStream)
	if code := deleteSession(t, n, id, "Bearer "+tok); code >= 300 {
		t.Fatalf("DELETE the session: %d", code)
	}
	code, _, body = post(t, n, "", toolsCall("10", "GREET", `{"name":"x"}`, ""), hdr...)
	if code == 200 || strings.Contains(body, "Hello") {
		t.Fatalf("a call after the session was deleted: %d %s", code, body)
	}
	deletedCallAppendedNothing(t, n, before)
}

// A session its client deleted is gone for the next call at once, whether or
// not the handler has yet seen the SDK end it: the call is the SDK's to refuse
// (404), nothing runs, nothing is appended. The end is held here as a loaded
// node can leave it, after the DELETE's answer and before the call.
func TestDeletedSessionIsGoneForTheNextCallAtOnce(t *testing.T) {
	n := nodetest.Start(t, nil)
	postRow(t, n, greetRow("GREET"))
	tok, _ := mint(t, n, token.Scope{Keys: []string{"GREET"}}, time.Now(), time.Hour)
	cs := connect(t, n, bearer(tok), "", nil)
	id := cs.ID()
	hdr := []string{"Mcp-Session-Id", id, "Authorization", "Bearer " + tok, "Mcp-Protocol-Version", "2025-06-18"}
	if code, _, body := post(t, n, "", toolsCall("1", "GREET", `{"name":"x"}`, ""), hdr...); code != 200 || !strings.Contains(body, "Hello") {
		t.Fatalf("a call of the open session: %d %s", code, body)
	}
	nodetest.WaitDispatchIdle(t, n.Log())
	before, _ := n.Log().LastSeq(context.Background(), wire.DataStream)

	release := mcp.HoldSessionEnds()
	defer release()
	if code := deleteSession(t, n, id, "Bearer "+tok); code >= 300 {
		t.Fatalf("DELETE the session: %d", code)
	}
	code, _, body := post(t, n, "", toolsCall("2", "GREET", `{"name":"y"}`, ""), hdr...)
	if code != http.StatusNotFound || strings.Contains(body, "Hello") {
		t.Fatalf("a call after the session was deleted, its end not yet seen: %d %s; want the SDK's 404", code, body)
	}
	release()
	deletedCallAppendedNothing(t, n, before)
}

// A DELETE of a session under another credential, or none, ends nothing: it is
// refused before the SDK sees it, and the session's own caller goes on calling
// on the fast path.
func TestSessionDeleteUnderAnotherCredentialEndsNothing(t *testing.T) {
	n := nodetest.Start(t, nil)
	postRow(t, n, greetRow("GREET"))
	tok, _ := mint(t, n, token.Scope{Keys: []string{"GREET"}}, time.Now(), time.Hour)
	other, _ := mint(t, n, token.Scope{Keys: []string{"GREET"}}, time.Now(), time.Hour)
	cs := connect(t, n, bearer(tok), "", nil)
	id := cs.ID()
	for _, auth := range []string{"Bearer " + other, "", "Bearer not-a-token"} {
		if code := deleteSession(t, n, id, auth); code != http.StatusForbidden && code != http.StatusUnauthorized {
			t.Fatalf("DELETE with Authorization %q: %d; want 401 or 403", auth, code)
		}
		hdr := []string{"Mcp-Session-Id", id, "Authorization", "Bearer " + tok, "Mcp-Protocol-Version", "2025-06-18"}
		if code, _, body := post(t, n, "", toolsCall("1", "GREET", `{"name":"x"}`, ""), hdr...); code != 200 || !strings.Contains(body, "Hello") {
			t.Fatalf("a call of the session after a DELETE with Authorization %q: %d %.300s", auth, code, body)
		}
	}
}

// deleteSession sends DELETE for session id with Authorization auth (none when
// empty) and returns the status.
func deleteSession(t *testing.T, n *capdir.Node, id, auth string) int {
	t.Helper()
	req, _ := http.NewRequest("DELETE", endpoint(n, ""), nil)
	req.Header.Set("Mcp-Session-Id", id)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("DELETE the session: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// deletedCallAppendedNothing fails t when the data stream, once the dispatch
// consumer is idle, is past before, its last sequence before a call of a
// deleted session.
func deletedCallAppendedNothing(t *testing.T, n *capdir.Node, before uint64) {
	t.Helper()
	nodetest.WaitDispatchIdle(t, n.Log())
	if after, _ := n.Log().LastSeq(context.Background(), wire.DataStream); after != before {
		t.Fatalf("a call after the session was deleted appended to the data stream: %d -> %d", before, after)
	}
}

// A request whose id is a number that would not come back with its value (a
// fraction, an integer past 2^53: the SDK reads ids as float64s) is refused as an
// invalid request under no id, before anything runs, on every method and both
// paths, in a session and opening one; an id that comes back as sent (a string,
// an integer up to 2^53) is answered under that id.
func TestIDsThatWouldNotComeBackAsSentAreRefused(t *testing.T) {
	n := nodetest.Start(t, nil)
	postRow(t, n, greetRow("GREET"))
	tok, _ := mint(t, n, token.Scope{Keys: []string{"GREET"}}, time.Now(), time.Hour)
	cs := connect(t, n, bearer(tok), "", nil)
	hdr := []string{"Mcp-Session-Id", cs.ID(), "Authorization", "Bearer " + tok, "Mcp-Protocol-Version", "2025-06-18"}
	nodetest.WaitDispatchIdle(t, n.Log())
	before, _ := n.Log().LastSeq(context.Background(), wire.DataStream)
	list := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"}` }
	initialize := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	}
	for _, id := range []string{"1.5", "1e-1", "1.0000000000000000001", "1e999", "1e9999999999", "9007199254740993", "9007199254740992.5", "1e16", "9223372036854775808", "12345678901234567890", "-9223372036854775809", "123456789012345678901234567890123456789"} {
		for what, body := range map[string]string{
			"tools/call": toolsCall(id, "GREET", `{"name":"x"}`, ""), "tools/list": list(id),
			"tools/call with _meta (the SDK's path)": toolsCall(id, "GREET", `{"name":"x"}`, `"_meta":{}`),
		} {
			code, _, out := post(t, n, "", body, hdr...)
			if code != http.StatusBadRequest || !strings.Contains(out, `"id":null`) || !strings.Contains(out, `"code":-32600`) ||
				!strings.Contains(out, "would not come back as sent") || strings.Contains(out, "Hello") || strings.Contains(out, `"tools"`) {
				t.Fatalf("%s under the id %s: %d %s; want 400, a JSON-RPC invalid request under no id", what, id, code, out)
			}
		}
		code, h, out := post(t, n, "", initialize(id), "Authorization", "Bearer "+tok)
		if code != http.StatusBadRequest || !strings.Contains(out, `"code":-32600`) || h.Get("Mcp-Session-Id") != "" {
			t.Fatalf("initialize under the id %s: %d %s (session %q); want 400 and no session", id, code, out, h.Get("Mcp-Session-Id"))
		}
	}
	nodetest.WaitDispatchIdle(t, n.Log())
	if after, _ := n.Log().LastSeq(context.Background(), wire.DataStream); after != before {
		t.Fatalf("refused ids appended to the data stream: %d -> %d", before, after)
	}
	for _, id := range []string{`"a-string"`, "0", "-7", "9007199254740992", "-9007199254740992"} {
		code, _, out := post(t, n, "", toolsCall(id, "GREET", `{"name":"x"}`, ""), hdr...)
		if code != 200 || !strings.Contains(out, `"id":`+id+`,`) || !strings.Contains(out, "Hello") {
			t.Fatalf("a call under the id %s: %d %s; want its answer under that id", id, code, out)
		}
		code, _, out = post(t, n, "", list(id), hdr...)
		if code != 200 || !strings.Contains(out, `"id":`+id+`,`) || !strings.Contains(out, "GREET") {
			t.Fatalf("tools/list under the id %s: %d %s; want its answer under that id", id, code, out)
		}
	}
}

// A batch (which sessions of protocol 2025-03-26 and before may send) is held to
// the same rule: one request in it under an id that would not come back as sent
// refuses the whole batch before any of it runs.
func TestBatchesWithIDsThatWouldNotComeBackAsSentAreRefused(t *testing.T) {
	n := nodetest.Start(t, nil)
	postRow(t, n, greetRow("GREET"))
	for _, version := range []string{"2025-03-26", "2024-11-05"} {
		code, h, out := post(t, n, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			"x-terminal-key", nodetest.Key)
		sid := h.Get("Mcp-Session-Id")
		if code != 200 || sid == "" {
			t.Fatalf("initialize %s: %d %s", version, code, out)
		}
		hdr := []string{"x-terminal-key", nodetest.Key, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", version}
		if code, _, out := post(t, n, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr...); code >= 300 {
			t.Fatalf("initialized %s: %d %s", version, code, out)
		}
		nodetest.WaitDispatchIdle(t, n.Log())
		before, _ := n.Log().LastSeq(context.Background(), wire.DataStream)
		for _, id := range []string{"1.5", "9007199254740993", "1e999"} {
			batch := "[" + toolsCall(id, "GREET", `{"name":"one"}`, "") + "," + toolsCall("1", "GREET", `{"name":"two"}`, "") + "]"
			code, _, out := post(t, n, "", batch, hdr...)
			if code != http.StatusBadRequest || !strings.Contains(out, `"code":-32600`) || strings.Contains(out, "Hello") {
				t.Fatalf("%s: a batch holding the id %s: %d %s; want 400, nothing run", version, id, code, out)
			}
			code, _, out = post(t, n, "", `[{"jsonrpc":"2.0","id":`+id+`,"method":"tools/list"}]`, hdr...)
			if code != http.StatusBadRequest || !strings.Contains(out, `"code":-32600`) {
				t.Fatalf("%s: tools/list in a batch under the id %s: %d %s; want 400", version, id, code, out)
			}
		}
		nodetest.WaitDispatchIdle(t, n.Log())
		if after, _ := n.Log().LastSeq(context.Background(), wire.DataStream); after != before {
			t.Fatalf("%s: refused batches appended to the data stream: %d -> %d", version, before, after)
		}
	}
	code, h, out := post(t, n, "", `[{"jsonrpc":"2.0","id":1.5,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}]`,
		"x-terminal-key", nodetest.Key)
	if code != http.StatusBadRequest || h.Get("Mcp-Session-Id") != "" {
		t.Fatalf("initialize in a batch under the id 1.5: %d %s (session %q); want 400 and no session", code, out, h.Get("Mcp-Session-Id"))
	}
}
