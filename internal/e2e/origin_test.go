package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// The origin of a credentialed row is the row's, not the caller's, end to end: a
// real node, a real upstream the row names, and a thief a token holder names in
// its arguments.

const originSecret = "acme-SECRET-0123456789"

func originNode(t *testing.T) *capdir.Node {
	return nodetest.Start(t, nil, capdir.WithEnv(runner.MapEnv(map[string]string{"ACME_API_KEY": originSecret})))
}

func originRow(key, target, auth string) string {
	b, _ := json.Marshal(map[string]string{"key": key, "type": "http", "target": target, "auth": auth,
		"content": "# WHAT: Read the status of the ACME service.\n# ARGS: $1=where"})
	return string(b)
}

// A write that would let a caller choose where a row's credential goes is refused
// (400, saying why, nothing stored) by POST, PUT, PATCH and import, for a slot in
// the host and for a raw slot right after the port.
func TestCredentialedRowOriginSlotRefusedOnWrite(t *testing.T) {
	n := originNode(t)
	const why = "a caller's arguments would choose where the credential is sent"
	for _, target := range []string{"GET http://$1/v1/status", "GET http://127.0.0.1:8081$$1"} {
		before := lastSeqs(t, n)
		row := originRow("STATUS", target, "bearer:ACME_API_KEY")
		for _, w := range []struct{ method, path, body string }{
			{"POST", "/api/directory", row},
			{"PUT", "/api/directory/STATUS", row},
		} {
			if code, body := nodetest.Do(t, n, w.method, w.path, w.body); code != 400 || !strings.Contains(body, why) {
				t.Errorf("%s %s: %d %s; want 400 saying why", w.method, target, code, body)
			}
		}
		code, body := nodetest.Do(t, n, "POST", "/api/directory/import", "["+row+"]")
		if code != 200 || !strings.Contains(body, `"ok":0`) || !strings.Contains(body, why) {
			t.Errorf("import %s: %d %s; want the row failed saying why", target, code, body)
		}
		mustAppendNothing(t, n, before, "a refused write of "+target)
		if code, _ := nodetest.Do(t, n, "GET", "/api/directory/STATUS", ""); code != 404 {
			t.Errorf("STATUS stored after refused writes: %d", code)
		}
	}
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", originRow("STATUS", "GET https://api.acme.test/v1/status", "bearer:ACME_API_KEY")); code != 201 {
		t.Fatalf("POST a literal origin: %d %s", code, body)
	}
	if code, body := nodetest.Do(t, n, "PATCH", "/api/directory/STATUS", `{"target":"GET https://$1/v1/status"}`); code != 400 || !strings.Contains(body, why) {
		t.Errorf("PATCH a slot into the host: %d %s", code, body)
	}
}

// A row stored before the write rule (its mutation is in the log) still never
// sends its credential where a caller says: a token holder's call, and the
// owner's, fail before sending with ERR:http:origin_changed:<want>!=<got>, and the
// thief gets nothing. A row without auth may take its host from a slot, and sends
// no credential.
func TestCredentialNeverSentToACallersOrigin(t *testing.T) {
	n := originNode(t)
	green := upstreamtest.Reply(http.StatusOK, `{"status":"green"}`)
	good, thief := upstreamtest.Start(t, green), upstreamtest.Start(t, green)
	rows := []struct{ key, target, body, want string }{
		{"HOST_SLOT", "GET http://$1/v1/status", thief.Host(),
			"ERR:http:origin_changed:http://$1!=" + thief.URL},
		{"PORT_RAW", "GET " + good.URL + "$$1", "@" + thief.Host() + "/x",
			"ERR:http:origin_changed:" + good.URL + "$$1!=" + thief.URL},
	}
	for _, r := range rows {
		row := contract.Row{Key: r.key, Type: contract.TypeHTTP, Target: r.target, Auth: "bearer:ACME_API_KEY",
			Content: "# WHAT: Read the status of the ACME service.", Enabled: 1, PlannerVisible: 1, PlannerRank: 100}
		forge(t, n, wire.DirectorySubject(r.key), wire.TypeDirectoryMutate,
			contract.DirectoryMutation{Action: contract.ActionCreate, Key: r.key, Row: &row})
	}
	tok := mint(t, n, `{"sub":"agent-7","scope":{"keys":["HOST_SLOT","PORT_RAW","FETCH"]}}`).Token
	for _, r := range rows {
		a := dispatchWith(t, n, tok, r.key, r.body)
		if a.Result != r.want || a.Ran || a.OK {
			t.Errorf("token holder's %s: %d %s; want %q, nothing sent", r.key, a.code, a.body, r.want)
		}
		code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"`+r.key+`","body":"`+r.body+`"}`)
		if !strings.Contains(body, `"result":"`+r.want+`"`) {
			t.Errorf("owner's %s: %d %s; want %q", r.key, code, body, r.want)
		}
	}
	if got := thief.Header("Authorization"); len(got) != 0 {
		t.Fatalf("the thief got %d requests, Authorization %q", len(got), got)
	}
	if got := good.Header("Authorization"); len(got) != 0 {
		t.Fatalf("a refused call reached the row's upstream: %q", got)
	}

	if code, body := nodetest.Do(t, n, "POST", "/api/directory", originRow("FETCH", "GET http://$1/v1/status", "")); code != 201 {
		t.Fatalf("POST a row without auth whose host is a slot: %d %s", code, body)
	}
	mustAdmit(t, dispatchWith(t, n, tok, "FETCH", thief.Host()), `HTTP 200:{"status":"green"}`)
	if got := thief.Header("Authorization"); len(got) != 1 || got[0] != "" {
		t.Fatalf("fetch any URL: the upstream saw %q; want one request with no credential", got)
	}
}
