package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/testdata"
)

// askAnswer is the JSON of GET /api/dispatch?ask=, decoded strictly.
type askAnswer struct {
	Ask     string `json:"ask"`
	Results []struct {
		Key      string   `json:"key"`
		Type     string   `json:"type"`
		Category string   `json:"category"`
		What     string   `json:"what"`
		Score    float64  `json:"score"`
		Why      []string `json:"why"`
	} `json:"results"`
	Total int `json:"total"`
}

func askKeys(t *testing.T, n *capdir.Node, query string) []string {
	t.Helper()
	body := mustDo(t, n, http.StatusOK, "GET", "/api/dispatch?"+query, "")
	var a askAnswer
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("?%s: %v\n%s", query, err, body)
	}
	keys := []string{}
	for _, r := range a.Results {
		keys = append(keys, r.Key)
	}
	return keys
}

func TestAskOverHTTP(t *testing.T) {
	n := nodetest.Start(t, nil)
	mustDo(t, n, http.StatusOK, "POST", "/api/directory/import", string(testdata.SampleRows()))

	body := mustDo(t, n, http.StatusOK, "GET", "/api/dispatch?ask=current+temperature+at+a+coordinate&limit=1", "")
	var a askAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatal(err)
	}
	if a.Ask != "current temperature at a coordinate" || a.Total != 2 || len(a.Results) != 1 {
		t.Fatalf("answer = %s; want the ask, total 2 (NOW holds \"current\"), one result", body)
	}
	r := a.Results[0]
	if r.Key != "ZZ_TEST_TEMPERATURE" || r.Type != "http" || r.Category != "tools" || r.Score <= 0 ||
		!strings.HasPrefix(r.What, "Current temperature in Celsius") ||
		!reflect.DeepEqual(r.Why, []string{"key: temperature", "what: current, temperature", "when_to_use: temperature, coordinate", "output: current, temperature"}) {
		t.Fatalf("first result = %+v", r)
	}
	for ask, want := range map[string]string{
		"what+time+is+it":        "NOW",
		"list+the+models+on+xAI": "GROK_MODELS",
		"peptide%20concierge":    "PROMPT_LAB_AGENT",
	} {
		if got := askKeys(t, n, "ask="+ask); len(got) == 0 || got[0] != want {
			t.Errorf("ask %s = %v, want %s first", ask, got, want)
		}
	}

	// Every write is searchable as soon as it returns.
	const zz = "ask=temperature+at+a+coordinate"
	mustDo(t, n, http.StatusOK, "PATCH", "/api/directory/ZZ_TEST_TEMPERATURE", `{"enabled":0}`)
	if got := askKeys(t, n, zz); len(got) != 0 {
		t.Fatalf("a disabled row was found: %v", got)
	}
	mustDo(t, n, http.StatusOK, "PATCH", "/api/directory/ZZ_TEST_TEMPERATURE", `{"enabled":1}`)
	if got := askKeys(t, n, zz); len(got) != 1 {
		t.Fatalf("enabled again: %v", got)
	}
	mustDo(t, n, http.StatusOK, "PATCH", "/api/directory/NOW", `{"content":"# WHAT: Air temperature at a coordinate, and the time there.\n[\"$1\"]"}`)
	if got := askKeys(t, n, zz); len(got) != 2 || got[0] != "NOW" {
		t.Fatalf("after NOW's docstring changed: %v, want NOW first", got)
	}
	mustDo(t, n, http.StatusOK, "DELETE", "/api/directory/NOW", "")
	if got := askKeys(t, n, zz); len(got) != 1 || got[0] != "ZZ_TEST_TEMPERATURE" {
		t.Fatalf("after NOW was deleted: %v", got)
	}
}

func TestAskRefusals(t *testing.T) {
	n := nodetest.Start(t, nil)
	mustDo(t, n, http.StatusOK, "POST", "/api/directory/import", string(testdata.SampleRows()))
	before, err := n.Log().LastSeq(context.Background(), wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}

	for _, key := range []string{"", "wrong-key-0123456789"} {
		status, body := nodetest.DoKey(t, n, "GET", "/api/dispatch?ask=time", "", key)
		if status != http.StatusUnauthorized || !strings.Contains(body, `"error":"unauthorized"`) || strings.Contains(body, "NOW") {
			t.Fatalf("key %q: %d %s, want 401 and nothing of the directory", key, status, body)
		}
	}
	for _, c := range []struct{ query, says string }{
		{"ask=", "say in plain words"},
		{"ask=+++", "say in plain words"},
		{"ask=what+is+it", `only common words`},
		{"ask=" + strings.Repeat("x", 513), "at most 512"},
		{"ask=" + url.QueryEscape("a1 b2 c3 d4 e5 f6 g7 h8 i9 j10 k11 l12 m13 n14 o15 p16 q17 r18 s19 t20 u21"), "at most 20"},
		{"ask=time&limit=0", "limit must be an integer of at least 1"},
		{"ask=time&limit=ten", "limit must be an integer of at least 1"},
		{"ask=time&ask=date", "send it once"},
		{"ask=time&key=NOW", "send one or the other"},
		{"ask=time&key=NOW&body=x", "send one or the other"},
	} {
		status, body := nodetest.Do(t, n, "GET", "/api/dispatch?"+c.query, "")
		if status != http.StatusBadRequest || !strings.Contains(body, c.says) {
			t.Errorf("?%.60s: %d %s, want 400 saying %q", c.query, status, body, c.says)
		}
	}
	if got := askKeys(t, n, "ask=time&limit=1000"); len(got) != 1 {
		t.Fatalf("a limit over 50 is lowered, not refused: %v", got)
	}
	// Nothing was invoked: ?ask= with ?key= ran nothing.
	after, err := n.Log().LastSeq(context.Background(), wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("the data stream moved from %d to %d: an ask appended something", before, after)
	}
}

func TestAskIndexRebuiltOnStart(t *testing.T) {
	dir := t.TempDir()
	first := nodetest.Start(t, func(c *capdir.Config) { c.Log.DataDir = dir })
	mustDo(t, first, http.StatusOK, "POST", "/api/directory/import", string(testdata.SampleRows()))
	nodetest.CheckReplay(t, first)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := first.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	second := nodetest.Start(t, func(c *capdir.Config) { c.Log.DataDir = dir })
	if got := askKeys(t, second, "ask=list+the+models+on+xAI"); len(got) == 0 || got[0] != "GROK_MODELS" {
		t.Fatalf("after a restart: %v, want GROK_MODELS first", got)
	}
}
