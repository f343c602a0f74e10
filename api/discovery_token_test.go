package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/testdata"
)

// mintFor mints a capability token with the owner key and returns it and its jti.
func mintFor(t *testing.T, n *capdir.Node, req string) (tok, jti string) {
	t.Helper()
	var m struct {
		Token string `json:"token"`
		JTI   string `json:"jti"`
	}
	decode(t, mustDo(t, n, http.StatusCreated, "POST", "/api/tokens", req), &m)
	return m.Token, m.JTI
}

// tokenRegistry is ?registry=1 answered to the holder of tok: its count and rows.
type tokenRegistry struct {
	Count int `json:"count"`
	Rows  []struct {
		Key      string `json:"key"`
		Category string `json:"category"`
	} `json:"rows"`
}

// tokenAsk is ?ask= answered to the holder of tok.
func tokenAsk(t *testing.T, n *capdir.Node, tok, query string) askAnswer {
	t.Helper()
	code, body := nodetest.DoToken(t, n, "GET", "/api/dispatch?ask="+query, "", tok)
	var a askAnswer
	if code != http.StatusOK || json.Unmarshal([]byte(body), &a) != nil {
		t.Fatalf("ask %s with a token: %d %s", query, code, body)
	}
	return a
}

// A capability token reads what its scope covers, and nothing else: its row's
// document with the affordances the token has, a registry of that row, and ask
// ranking that row alone (even when the words fit another row better); any other
// row's document is the 404 of a key with no row.
func TestDiscoveryWithToken(t *testing.T) {
	n := nodetest.Start(t, nil)
	mustDo(t, n, http.StatusOK, "POST", "/api/directory/import", string(testdata.SampleRows()))
	tok, _ := mintFor(t, n, `{"sub":"reader","scope":{"keys":["NOW"]}}`)

	code, body := nodetest.DoToken(t, n, "GET", "/api/dispatch?key=NOW&format=json", "", tok)
	var doc struct {
		Key         string `json:"key"`
		Affordances struct {
			Can    []string `json:"can"`
			Cannot []string `json:"cannot"`
		} `json:"affordances"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &doc) != nil || doc.Key != "NOW" {
		t.Fatalf("NOW's document to its token: %d %s", code, body)
	}
	if !reflect.DeepEqual(doc.Affordances.Can, []string{"read", "invoke"}) {
		t.Errorf("affordances.can = %v, want [read invoke]", doc.Affordances.Can)
	}
	if code, body := nodetest.DoToken(t, n, "GET", "/api/dispatch?key=NOW&format=markdown", "", tok); code != http.StatusOK || !strings.Contains(body, "read, invoke") {
		t.Errorf("NOW's Markdown document to its token: %d\n%s", code, body)
	}

	// Out of scope is answered exactly as no row: scope does not leak existence.
	notFound := `{"error":"not_found","how_to_fix":"GET /api/dispatch?registry=1 lists the keys you may read (keys are case-sensitive)","key":"%s"}`
	for _, key := range []string{"GROK_MODELS", "NO_SUCH_KEY"} {
		for _, format := range []string{"json", "markdown"} {
			code, body := nodetest.DoToken(t, n, "GET", "/api/dispatch?key="+key+"&format="+format, "", tok)
			if code != http.StatusNotFound || strings.TrimSpace(body) != fmt.Sprintf(notFound, key) {
				t.Errorf("%s as %s to a token scoped to NOW: %d %s", key, format, code, body)
			}
		}
	}

	code, body = nodetest.DoToken(t, n, "GET", "/api/dispatch?registry=1", "", tok)
	var reg tokenRegistry
	if code != http.StatusOK || json.Unmarshal([]byte(body), &reg) != nil || reg.Count != 1 || len(reg.Rows) != 1 || reg.Rows[0].Key != "NOW" {
		t.Fatalf("the registry to a token scoped to NOW: %d %s", code, body)
	}

	// The owner's first answer is ZZ_TEST_TEMPERATURE; the token's only row is NOW.
	const q = "current+temperature+at+a+coordinate"
	if got := askKeys(t, n, "ask="+q); len(got) != 2 || got[0] != "ZZ_TEST_TEMPERATURE" {
		t.Fatalf("the owner's ask = %v, want ZZ_TEST_TEMPERATURE first of two", got)
	}
	if a := tokenAsk(t, n, tok, q); a.Total != 1 || len(a.Results) != 1 || a.Results[0].Key != "NOW" {
		t.Errorf("the token's ask = %+v, want NOW alone", a)
	}
}

// A token scoped to a category reads the rows of that category; one above its
// risk ceiling (PAY_CLOCK, sensitive) is found and read, but its affordances do
// not include invoke.
func TestDiscoveryWithCategoryToken(t *testing.T) {
	n := nodetest.Start(t, nil)
	mustDo(t, n, http.StatusOK, "POST", "/api/directory/import", string(testdata.SampleRows()))
	mustDo(t, n, http.StatusCreated, "POST", "/api/directory",
		`{"key":"PAY_CLOCK","type":"fn","target":"now","category":"time","sensitive":1,"input_schema":"{\"type\":\"string\"}","content":"# WHAT: The time, for payroll.\n# EX: [PAY_CLOCK][/PAY_CLOCK]"}`)
	tok, _ := mintFor(t, n, `{"sub":"reader","scope":{"categories":["time"]}}`)

	code, body := nodetest.DoToken(t, n, "GET", "/api/dispatch?registry=1", "", tok)
	var reg tokenRegistry
	if code != http.StatusOK || json.Unmarshal([]byte(body), &reg) != nil || reg.Count == 0 {
		t.Fatalf("the registry to a token scoped to time: %d %s", code, body)
	}
	for _, r := range reg.Rows {
		if r.Category != "time" {
			t.Errorf("the registry to a token scoped to time lists %s (%s)", r.Key, r.Category)
		}
	}
	keys := []string{}
	for _, r := range reg.Rows {
		keys = append(keys, r.Key)
	}
	if !slices.Contains(keys, "NOW") || !slices.Contains(keys, "PAY_CLOCK") {
		t.Errorf("the registry to a token scoped to time = %v, want NOW and PAY_CLOCK", keys)
	}
	code, body = nodetest.DoToken(t, n, "GET", "/api/dispatch?key=PAY_CLOCK&format=json", "", tok)
	if code != http.StatusOK || !strings.Contains(body, `"can":["read"]`) {
		t.Errorf("a high-risk row to a low-ceiling token: %d %s", code, body)
	}
}

// A token that does not hold (revoked, or not a token) is 401 with its literal
// reason on every discovery form, and says nothing of the directory.
func TestDiscoveryTokenRefused(t *testing.T) {
	n := nodetest.Start(t, nil)
	mustDo(t, n, http.StatusOK, "POST", "/api/directory/import", string(testdata.SampleRows()))
	tok, jti := mintFor(t, n, `{"sub":"reader","scope":{"keys":["NOW"]}}`)
	mustDo(t, n, http.StatusOK, "DELETE", "/api/tokens/"+jti, "")
	paths := []string{"/api/dispatch?key=NOW&format=json", "/api/dispatch?key=NOW&format=markdown", "/api/dispatch?registry=1", "/api/dispatch?ask=time"}
	for _, c := range []struct{ tok, reason string }{{tok, "token:revoked"}, {"not-a-token", "token:malformed"}} {
		for _, p := range paths {
			code, body := nodetest.DoToken(t, n, "GET", p, "", c.tok)
			var got struct {
				Error string `json:"error"`
				Ran   bool   `json:"ran"`
			}
			if code != http.StatusUnauthorized || json.Unmarshal([]byte(body), &got) != nil || got.Error != c.reason || strings.Contains(body, `"NOW"`) {
				t.Errorf("%s with %s: %d %s; want 401 %s", p, c.reason, code, body, c.reason)
			}
		}
	}
}
