package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

type historyAnswer struct {
	Key     string            `json:"key"`
	Changes []contract.Change `json:"changes"`
}

type contractAnswer struct {
	InvocationID string       `json:"invocation_id"`
	Mutation     uint64       `json:"mutation_seq"`
	Fingerprint  string       `json:"fingerprint"`
	Row          contract.Row `json:"row"`
}

// A receipt links to the row it ran under: its fingerprint is the receipt's
// contract fingerprint, after the row changed and after it was deleted.
func TestReceiptContractIsTheRowItRanUnder(t *testing.T) {
	n := nodetest.Start(t, nil)
	row := `{"key":"GREET","type":"fn","target":"echo","content":"# WHAT: greet\n[\"%s, $1!\"]"}`
	var invs []string
	for i, word := range []string{"Hello", "Hi"} {
		if i == 0 {
			mustDo(t, n, 201, "POST", "/api/directory", fmt.Sprintf(row, word))
		} else {
			mustDo(t, n, 200, "PUT", "/api/directory/GREET", fmt.Sprintf(row, word))
		}
		code, got := dispatch(t, n, `{"key":"GREET","body":"Ada"}`)
		if code != 200 || got["result"] != word+", Ada!" {
			t.Fatalf("dispatch: %d %v", code, got)
		}
		invs = append(invs, got["proof"].(map[string]any)["invocation_id"].(string))
	}
	mustDo(t, n, 200, "DELETE", "/api/directory/GREET", "")
	var fps []string
	for i, inv := range invs {
		var rc wire.Receipt
		decode(t, mustDo(t, n, 200, "GET", "/api/receipts/"+inv, ""), &rc)
		var c contractAnswer
		decode(t, mustDo(t, n, 200, "GET", "/api/receipts/"+inv+"/contract", ""), &c)
		if rc.ContractSeq == 0 || c.Mutation != rc.ContractSeq {
			t.Fatalf("receipt %d: contract_seq %d, linked contract written at %d", i, rc.ContractSeq, c.Mutation)
		}
		if c.Fingerprint != rc.Fingerprints.Contract || contract.Fingerprint(&c.Row) != rc.Fingerprints.Contract {
			t.Fatalf("receipt %d ran under %s; its linked contract is %s (%+v)", i, rc.Fingerprints.Contract, c.Fingerprint, c.Row)
		}
		if want := []string{"Hello", "Hi"}[i]; !strings.Contains(c.Row.Content, want) {
			t.Fatalf("receipt %d: linked row %q, want the version saying %s", i, c.Row.Content, want)
		}
		fps = append(fps, c.Fingerprint)
	}
	if fps[0] == fps[1] {
		t.Fatal("both calls ran under one contract: the replace did not change it")
	}
	if code, body := nodetest.Do(t, n, "GET", "/api/receipts/inv_nosuch/contract", ""); code != 404 {
		t.Fatalf("an unknown receipt's contract: %d %s", code, body)
	}
}

// The history of a row, and the row and the directory at a past sequence or time,
// through the routes; a deleted row's history stays readable.
func TestHistoryRoutes(t *testing.T) {
	n := nodetest.Start(t, nil)
	mustDo(t, n, 201, "POST", "/api/directory", fmt.Sprintf(compliantRow, "CLOCK"))
	created := nodetest.ControlSeq(t, n)
	mustDo(t, n, 200, "PATCH", "/api/directory/CLOCK", `{"category":"clock"}`)
	mustDo(t, n, 200, "DELETE", "/api/directory/CLOCK", "")
	deleted := nodetest.ControlSeq(t, n)

	var h historyAnswer
	decode(t, mustDo(t, n, 200, "GET", "/api/directory/CLOCK/history", ""), &h)
	if len(h.Changes) != 3 {
		t.Fatalf("history: %+v", h)
	}
	c, p, d := h.Changes[0], h.Changes[1], h.Changes[2]
	if c.Action != "create" || c.Seq != created || !c.ContractChanged || c.Actor == "" || c.At.IsZero() {
		t.Fatalf("create: %+v", c)
	}
	if p.Action != "patch" || !p.ContractChanged || !hasField(p.Fields, "category", "time", "clock") {
		t.Fatalf("patch: %+v", p)
	}
	if d.Action != "delete" || d.Seq != deleted || d.Row != nil || d.Fingerprint != "" || !d.ContractChanged {
		t.Fatalf("delete: %+v", d)
	}

	var at struct {
		contract.Row
		Mutation uint64 `json:"mutation_seq"`
	}
	decode(t, mustDo(t, n, 200, "GET", fmt.Sprintf("/api/directory/CLOCK?at=%d", created), ""), &at)
	if at.Category != "time" || at.Mutation != created {
		t.Fatalf("CLOCK at %d: %+v", created, at)
	}
	mustDo(t, n, 404, "GET", fmt.Sprintf("/api/directory/CLOCK?at=%d", deleted), "")
	mustDo(t, n, 404, "GET", "/api/directory/CLOCK", "")
	var page struct {
		Rows  []contract.Row `json:"rows"`
		Total int            `json:"total"`
		At    uint64         `json:"at"`
	}
	decode(t, mustDo(t, n, 200, "GET", fmt.Sprintf("/api/directory?at=%d&category=time", created), ""), &page)
	if page.Total != 1 || page.Rows[0].Key != "CLOCK" || page.Rows[0].RowNum != 1 || page.At != created {
		t.Fatalf("directory at %d: %+v", created, page)
	}
	byTime := c.At.Format("2006-01-02T15:04:05.999999999Z07:00")
	decode(t, mustDo(t, n, 200, "GET", "/api/directory?at="+byTime, ""), &page)
	if page.Total != 1 || page.At != created {
		t.Fatalf("directory at %s: %+v", byTime, page)
	}
	// A time after the log's end is the directory now.
	decode(t, mustDo(t, n, 200, "GET", "/api/directory?at=2999-01-01T00:00:00Z", ""), &page)
	if page.Total != 0 || page.At != deleted {
		t.Fatalf("directory at a future time: %+v", page)
	}
	// A time before the first event is the empty directory at sequence 0, which
	// is asked for again by that sequence: the same answer.
	early := mustDo(t, n, 200, "GET", "/api/directory?at=1999-01-01T00:00:00Z", "")
	decode(t, early, &page)
	if page.Total != 0 || page.At != 0 {
		t.Fatalf("directory before the first event: %+v", page)
	}
	if again := mustDo(t, n, 200, "GET", fmt.Sprintf("/api/directory?at=%d", page.At), ""); again != early {
		t.Fatalf("the directory at its own answer's at=%d: %s; at the time it came from: %s", page.At, again, early)
	}
	_, _, doc := get(t, n, fmt.Sprintf("/api/dispatch?key=CLOCK&format=json&at=%d", created), nodetest.Key)
	if !strings.Contains(doc, `"CLOCK"`) {
		t.Fatalf("contract document at %d: %s", created, doc)
	}
	mustDo(t, n, 404, "GET", "/api/directory/NEVER/history", "")
}

func hasField(fields []contract.FieldChange, name, old, new string) bool {
	for _, f := range fields {
		if f.Field == name {
			return fmt.Sprint(f.Old) == old && fmt.Sprint(f.New) == new
		}
	}
	return false
}

// The history routes are the owner's: no key, a wrong key or a capability token
// is 401; a bad at= is 400 naming the forms; a sequence beyond the log is 400.
func TestHistoryRoutesRefuse(t *testing.T) {
	n := nodetest.Start(t, nil)
	mustDo(t, n, 201, "POST", "/api/directory", fmt.Sprintf(compliantRow, "CLOCK"))
	_, got := dispatch(t, n, `{"key":"CLOCK","body":""}`)
	inv := got["proof"].(map[string]any)["invocation_id"].(string)
	tok, _ := mintFor(t, n, `{"sub":"reader","scope":{"keys":["CLOCK"]}}`)
	paths := []string{"/api/directory/CLOCK/history", "/api/directory?at=1", "/api/directory/CLOCK?at=1",
		"/api/receipts/" + inv + "/contract", "/api/dispatch?key=CLOCK&format=json&at=1"}
	for _, path := range paths {
		for _, key := range []string{"", "not-the-owner-key-0123456789"} {
			if code, body := nodetest.DoKey(t, n, "GET", path, "", key); code != http.StatusUnauthorized {
				t.Errorf("GET %s with key %q: %d %s", path, key, code, body)
			}
		}
		if code, body := nodetest.DoToken(t, n, "GET", path, "", tok); code != http.StatusUnauthorized {
			t.Errorf("GET %s with a token: %d %s", path, code, body)
		}
	}
	last := nodetest.ControlSeq(t, n)
	for _, path := range []string{"/api/directory", "/api/directory/CLOCK", "/api/dispatch?key=CLOCK&format=json"} {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		for _, at := range []string{"", "-1", "+1", "0x1", "abc", "2026-13-01T00:00:00Z", "1e3", strings.Repeat("9", 10000)} {
			code, body := nodetest.Do(t, n, "GET", path+sep+"at="+at, "")
			if code != 400 || !strings.Contains(body, "at must be a control-stream sequence") || len(body) > 1000 {
				t.Errorf("GET %s at=%.20q: %d %.300s", path, at, code, body)
			}
		}
		code, body := nodetest.Do(t, n, "GET", fmt.Sprintf("%s%sat=%d", path, sep, last+1), "")
		if code != 400 || !strings.Contains(body, fmt.Sprintf("the control stream's last sequence is %d", last)) {
			t.Errorf("GET %s beyond the log: %d %s", path, code, body)
		}
	}
	if code, body := nodetest.Do(t, n, "GET", "/api/dispatch?registry=1&at=1", ""); code != 400 || !strings.Contains(body, "at= reads one row") {
		t.Errorf("registry at: %d %s", code, body)
	}
	if code, body := nodetest.Do(t, n, "GET", "/api/directory/bad%20key/history", ""); code != 400 {
		t.Errorf("a bad key's history: %d %s", code, body)
	}
}
