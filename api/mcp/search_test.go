package mcp_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

// Search mode lists three tools whatever the directory holds; search finds rows by
// plain words among those the credential is offered, describe reads one contract,
// call runs a row through the same gate with its receipt.
func TestSearchMode(t *testing.T) {
	n := nodetest.Start(t, nil)
	postRow(t, n, greetRow("GREET"))
	postRow(t, n, greetRow("PAY"))
	postRow(t, n, map[string]any{"key": "WEATHER", "type": "fn", "target": "echo",
		"content": "# WHAT: Current weather for a city.\n# ARGS: $1=city\n[\"sunny in $1\"]"})

	cs := connect(t, n, owner(), "mode=search", nil)
	if names := listNames(t, cs); !slices.Equal(names, []string{"call", "describe", "search"}) {
		t.Fatalf("search mode lists %v", names)
	}
	got := call(t, cs, "search", map[string]any{"query": "weather in a city"})
	if got.IsError || text(got) != "WEATHER — Current weather for a city. (args: $1=city)\n" {
		t.Errorf("search: %q", text(got))
	}
	b, _ := json.Marshal(got.StructuredContent)
	if !strings.Contains(string(b), `"count":1`) || !strings.Contains(string(b), `"key":"WEATHER"`) {
		t.Errorf("search structuredContent = %s", b)
	}
	got = call(t, cs, "describe", map[string]any{"key": "WEATHER"})
	if got.IsError || !strings.Contains(text(got), "WEATHER") || !strings.Contains(text(got), "Current weather for a city.") {
		t.Errorf("describe WEATHER: %q", text(got))
	}
	got = call(t, cs, "call", map[string]any{"key": "WEATHER", "args": "Lisbon"})
	if got.IsError || text(got) != "sunny in Lisbon" {
		t.Fatalf("call WEATHER: isError=%v %q", got.IsError, text(got))
	}
	if rc := receipt(t, n, invocationID(t, got)); rc.Key != "WEATHER" || rc.Actor != wire.OwnerActor {
		t.Errorf("receipt = %+v", rc.ReceiptSummary)
	}
	// A row written now is found at once, on the same session.
	postRow(t, n, map[string]any{"key": "TIDE", "type": "fn", "target": "echo", "content": "# WHAT: Tide times for a harbour.\n[\"high at noon\"]"})
	if got := call(t, cs, "search", map[string]any{"query": "tide"}); !strings.HasPrefix(text(got), "TIDE — ") {
		t.Errorf("search for a new row: %q", text(got))
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"search", map[string]any{}, `ERR:mcp:bad_arguments:search:"query" must hold a word or more`},
		{"search", map[string]any{"q": "x"}, `ERR:mcp:bad_arguments:search:unknown field "q"`},
		{"search", map[string]any{"query": "x", "limit": 500}, `ERR:mcp:bad_arguments:search:"limit" must be from 1 to 50`},
		{"describe", map[string]any{"key": "NOPE"}, "not_found:NOPE: search lists the keys you may call (keys are case-sensitive)"},
		{"call", map[string]any{"key": "GREET", "args": 7}, `ERR:mcp:bad_arguments:call:"args" must be a string (the arguments separated by |) or an object (for a row with an input schema)`},
	} {
		if got := call(t, cs, c.tool, c.args); !got.IsError || text(got) != c.want {
			t.Errorf("%s %v: isError=%v %q, want %q", c.tool, c.args, got.IsError, text(got), c.want)
		}
	}

	// A token holder searches, reads and calls only its scope.
	tok, _ := mint(t, n, token.Scope{Keys: []string{"GREET"}}, time.Now(), time.Hour)
	ts := connect(t, n, bearer(tok), "mode=search", nil)
	if got := call(t, ts, "search", map[string]any{"query": "greet pay weather"}); !strings.HasPrefix(text(got), "GREET — ") || strings.Count(text(got), "\n") != 1 {
		t.Errorf("token search: %q", text(got))
	}
	if got := call(t, ts, "describe", map[string]any{"key": "PAY"}); !got.IsError || !strings.HasPrefix(text(got), "not_found:PAY:") {
		t.Errorf("token describe PAY: %q", text(got))
	}
	got = call(t, ts, "call", map[string]any{"key": "PAY", "args": "1"})
	if !got.IsError || text(got) != "scope:PAY" {
		t.Errorf("token call PAY: isError=%v %q", got.IsError, text(got))
	}
	if rc := receipt(t, n, invocationID(t, got)); rc.Status != wire.StatusRefusedScope {
		t.Errorf("PAY receipt = %+v", rc.ReceiptSummary)
	}
}

// A token holder's search ranks the rows in its scope only: rows it cannot see,
// however well they match, neither crowd its rows out of the results nor count.
func TestSearchRanksOnlyTheTokensScope(t *testing.T) {
	n := nodetest.Start(t, nil)
	rows := []any{}
	for i := range 60 { // more than one search ranks
		rows = append(rows, map[string]any{"key": "WEATHER" + strconv.Itoa(i), "type": "fn", "target": "echo",
			"content": "# WHAT: Weather, weather and the weather forecast.\n[\"sunny\"]"})
	}
	rows = append(rows, map[string]any{"key": "TIDE", "type": "fn", "target": "echo",
		"content": "# WHAT: Tide times for a harbour, whatever the weather.\n[\"high at noon\"]"})
	b, _ := json.Marshal(rows)
	if code, body := nodetest.Do(t, n, "POST", "/api/directory/import", string(b)); code != 200 && code != 201 {
		t.Fatalf("import: %d %s", code, body)
	}
	tok, _ := mint(t, n, token.Scope{Keys: []string{"TIDE"}}, time.Now(), time.Hour)
	ts := connect(t, n, bearer(tok), "mode=search", nil)
	if got := call(t, ts, "search", map[string]any{"query": "weather"}); got.IsError || !strings.HasPrefix(text(got), "TIDE — ") {
		t.Errorf("token search for a word 60 rows outside its scope match better: %q", text(got))
	}
	os := connect(t, n, owner(), "mode=search", nil)
	if got := call(t, os, "search", map[string]any{"query": "weather", "limit": 50}); strings.Count(text(got), "\n") != 50 || strings.Contains(text(got), "TIDE") {
		t.Errorf("owner search: %q", text(got))
	}
}
