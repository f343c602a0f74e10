package agentrunner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/agentrunner/agenttest"
)

const (
	keyVar   = "MODEL_API_KEY"
	keyValue = "sk-agent-S3CRET-value"
)

// newAgent is a runner whose providers route "t:" to srv, with keyVar set behind
// the default allow-list; cfg's other fields are kept.
func newAgent(t *testing.T, srv *agenttest.Server, cfg Config) *Runner {
	t.Helper()
	if srv != nil && len(cfg.Providers.List()) == 0 {
		ps, err := ParseProviders([]string{"t:=" + srv.URL + "/v1"})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Providers = ps
	}
	if cfg.Env == nil {
		secrets, err := runner.ParseSecretEnv(runner.DefaultSecretEnv...)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Env = secrets.Guard(runner.MapEnv(map[string]string{keyVar: keyValue, "DB_PASSWORD": "hunter2"}))
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func agentRow(key, model, content string) *contract.Row {
	return &contract.Row{Key: key, Type: contract.TypeAgent, Target: model, Content: content, Enabled: 1}
}

func mustOK(t *testing.T, o runner.Outcome) {
	t.Helper()
	if !o.OK() || o.Err != nil {
		t.Fatalf("call failed: %q (%v)", o.Result, o.Err)
	}
}

func TestIncludesComposedInOrder(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.Answer("one"), agenttest.Answer("two"))
	r := newAgent(t, srv, Config{})
	inv := newInvoker(
		&contract.Row{Key: "BLOCK_VOICE", Type: contract.TypeFn, Content: "# WHAT: the house voice\nSpeak plainly."},
		&contract.Row{Key: "BLOCK_RULES", Type: contract.TypeFn, Content: "Never guess.\nSay so when unsure."},
	)
	row := agentRow("ROUTER", "t:m", "# WHAT: routes a message\nYou route messages.")
	row.Includes = " BLOCK_RULES, ,BLOCK_VOICE"

	o := r.Run(context.Background(), runner.Call{Row: row, Body: "hello|there", Sub: inv})
	mustOK(t, o)
	if o.Result != "one" {
		t.Errorf("Result %q, want the model's answer", o.Result)
	}
	// Editing a block changes the next call's prompt: blocks are read at run time.
	inv.set(&contract.Row{Key: "BLOCK_VOICE", Type: contract.TypeFn, Content: "Speak warmly."})
	mustOK(t, r.Run(context.Background(), runner.Call{Row: row, Body: "again", Sub: inv}))

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	want := []string{
		"Never guess.\nSay so when unsure.\n\nSpeak plainly.\n\nYou route messages.",
		"Never guess.\nSay so when unsure.\n\nSpeak warmly.\n\nYou route messages.",
	}
	for i, req := range reqs {
		if got := req.System(); got != want[i] {
			t.Errorf("request %d: system prompt %q, want %q", i, got, want[i])
		}
		if req.Chat.Model != "m" || req.Path != "/v1/chat/completions" || req.Method != http.MethodPost {
			t.Errorf("request %d: %s %s model %q", i, req.Method, req.Path, req.Chat.Model)
		}
		if len(req.Chat.Tools) != 0 {
			t.Errorf("request %d offers tools %v without allowed_categories", i, req.ToolNames())
		}
	}
	if got := reqs[0].User(); got != "hello|there" {
		t.Errorf("user message %q, want the body verbatim", got)
	}
}

func TestIncludeFailures(t *testing.T) {
	srv := agenttest.NewServer(t)
	r := newAgent(t, srv, Config{})
	row := agentRow("A", "t:m", "p")
	for _, tc := range []struct {
		includes string
		sub      runner.Invoker
		want     string
		kind     error
	}{
		{"MISSING", newInvoker(), "ERR:agent:include:MISSING:no such row", ErrInclude},
		{"BAD KEY", newInvoker(), "ERR:agent:include:BAD KEY:not a row key", ErrInclude},
		{"BLOCK", nil, "ERR:agent:no_invoker:includes", ErrNoInvoker},
	} {
		row := *row
		row.Includes = tc.includes
		o := r.Run(context.Background(), runner.Call{Row: &row, Sub: tc.sub})
		if o.Result != tc.want || !errors.Is(o.Err, tc.kind) || o.Ran {
			t.Errorf("includes %q: %q ran=%v (%v), want %q", tc.includes, o.Result, o.Ran, o.Err, tc.want)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

func toolRows() []*contract.Row {
	return []*contract.Row{
		{Key: "WEATHER", Type: contract.TypeHTTP, Category: "weather", Enabled: 1,
			Content: "# WHAT: current weather for a city\n# WHEN_TO_USE: the user asks about weather\n# ARGS: city | units\nGET x"},
		{Key: "GEO", Type: contract.TypeFn, Category: "weather", Enabled: 1, Content: "# WHAT: coordinates of a place",
			InputSchema: `{"type": "object", "properties": {"place": {"type": "string"}}, "required": ["place"]}`},
		{Key: "ADMIN_DELETE", Type: contract.TypeFn, Category: "admin", Enabled: 1, Content: "# WHAT: deletes everything"},
		{Key: "OFF", Type: contract.TypeFn, Category: "weather", Enabled: 0, Content: "# WHAT: disabled"},
	}
}

func TestToolRoundTrip(t *testing.T) {
	srv := agenttest.NewServer(t,
		agenttest.Reply{ToolCalls: []agenttest.ToolCall{
			{ID: "c1", Name: "WEATHER", Arguments: `{"args":"Paris|metric"}`},
			{ID: "c2", Name: "GEO", Arguments: `{ "place" : "Paris" }`},
		}},
		agenttest.Answer("It is 21C in Paris."),
	)
	r := newAgent(t, srv, Config{})
	inv := newInvoker(toolRows()...)
	inv.result = func(key, body string) string {
		if key == "WEATHER" {
			return `HTTP 200:{"temp":21}`
		}
		return `{"lat":48.85,"lon":2.35}`
	}
	row := agentRow("WEATHER_BOT", "t:m", "You answer weather questions.")
	row.AllowedCategories = "weather"

	o := r.Run(context.Background(), runner.Call{Row: row, Body: "weather in Paris?", Sub: inv})
	mustOK(t, o)
	if o.Result != "It is 21C in Paris." {
		t.Errorf("Result %q, want the final answer", o.Result)
	}
	if !o.Ran || o.Upstream != http.StatusOK {
		t.Errorf("Ran %v Upstream %d", o.Ran, o.Upstream)
	}
	wantInv := []invocation{{"tool-1", "WEATHER", "Paris|metric"}, {"tool-2", "GEO", `{"place":"Paris"}`}}
	if got := inv.invocations(); !reflect.DeepEqual(got, wantInv) {
		t.Errorf("invocations %+v, want %+v", got, wantInv)
	}
	if want := []string{"inv_tool-1", "inv_tool-2"}; !reflect.DeepEqual(o.Children, want) {
		t.Errorf("Children %v, want %v", o.Children, want)
	}
	if want := []string{"weather"}; !reflect.DeepEqual(inv.asked, want) {
		t.Errorf("Tools asked for %v, want %v", inv.asked, want)
	}

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	// The first request offers the enabled rows of the allowed category, nothing else.
	first := reqs[0]
	if got, want := first.ToolNames(), []string{"GEO", "WEATHER"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("tools offered %v, want %v", got, want)
	}
	geo, weather := first.Chat.Tools[0], first.Chat.Tools[1]
	if weather.Description != "current weather for a city\nWhen to use: the user asks about weather" {
		t.Errorf("WEATHER description %q", weather.Description)
	}
	var params struct {
		Properties map[string]struct{ Type, Description string }
	}
	if err := json.Unmarshal(weather.Parameters, &params); err != nil || params.Properties["args"].Type != "string" ||
		!strings.Contains(params.Properties["args"].Description, "city | units") {
		t.Errorf("WEATHER parameters %s (%v)", weather.Parameters, err)
	}
	if string(geo.Parameters) != `{"type":"object","properties":{"place":{"type":"string"}},"required":["place"]}` {
		t.Errorf("GEO parameters %s, want its input_schema", geo.Parameters)
	}
	// The second carries the model's tool calls and each tool's result, by call id.
	second := reqs[1]
	msgs := second.Chat.Messages
	if len(msgs) != 5 || msgs[2].Role != "assistant" || len(msgs[2].ToolCalls) != 2 {
		t.Fatalf("second request messages %+v", msgs)
	}
	want := map[string]string{"c1": `HTTP 200:{"temp":21}`, "c2": `{"lat":48.85,"lon":2.35}`}
	if got := second.ToolResults(); !reflect.DeepEqual(got, want) {
		t.Errorf("tool results sent back %v, want %v", got, want)
	}
}

func TestToolNotOfferedIsNotInvoked(t *testing.T) {
	srv := agenttest.NewServer(t,
		agenttest.Call("ADMIN_DELETE", `{"args":"all"}`),
		agenttest.Call("OFF", `{}`),
		agenttest.Answer("I cannot do that."),
	)
	r := newAgent(t, srv, Config{})
	inv := newInvoker(toolRows()...)
	row := agentRow("BOT", "t:m", "p")
	row.AllowedCategories = "weather"

	o := r.Run(context.Background(), runner.Call{Row: row, Sub: inv})
	mustOK(t, o)
	if got := inv.invocations(); len(got) != 0 {
		t.Fatalf("a tool that was not offered was invoked: %+v", got)
	}
	if len(o.Children) != 0 {
		t.Errorf("Children %v, want none", o.Children)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, name := range []string{"ADMIN_DELETE", "OFF"} {
		res := reqs[i+1].ToolResults()["call_"+fmt.Sprint(i+1)]
		if !strings.HasPrefix(res, "ERR:agent:tool_not_offered:"+name+":") {
			t.Errorf("the model was told %q about %s", res, name)
		}
	}
}

func TestBadToolArgumentsAreNotInvoked(t *testing.T) {
	srv := agenttest.NewServer(t,
		agenttest.Reply{ToolCalls: []agenttest.ToolCall{
			{Name: "WEATHER", Arguments: `not json`},
			{Name: "WEATHER", Arguments: `{"args":42}`},
			{Name: "GEO", Arguments: `["Paris"]`},
			{Name: "WEATHER", Arguments: ``},
		}},
		agenttest.Answer("done"),
	)
	r := newAgent(t, srv, Config{})
	inv := newInvoker(toolRows()...)
	row := agentRow("BOT", "t:m", "p")
	row.AllowedCategories = "*"
	mustOK(t, r.Run(context.Background(), runner.Call{Row: row, Sub: inv}))

	// Only the call without arguments ran, with an empty body, as step tool-4.
	if got, want := inv.invocations(), []invocation{{"tool-4", "WEATHER", ""}}; !reflect.DeepEqual(got, want) {
		t.Errorf("invocations %+v, want %+v", got, want)
	}
	res := srv.Requests()[1].ToolResults()
	for id, want := range map[string]string{
		"call_1": "ERR:agent:bad_tool_arguments:WEATHER:the arguments must be a JSON object",
		"call_2": `ERR:agent:bad_tool_arguments:WEATHER:"args" must be a string`,
		"call_3": "ERR:agent:bad_tool_arguments:GEO:the arguments must be a JSON object",
		"call_4": "WEATHER()",
	} {
		if res[id] != want {
			t.Errorf("%s: the model was told %q, want %q", id, res[id], want)
		}
	}
}

func TestStepLimit(t *testing.T) {
	srv := agenttest.NewServerFunc(t, func(agenttest.Request) agenttest.Reply {
		r := agenttest.Call("WEATHER", `{"args":"again"}`)
		r.Usage = agenttest.Usage{PromptTokens: 10, CompletionTokens: 1}
		return r
	})
	r := newAgent(t, srv, Config{MaxSteps: 3})
	inv := newInvoker(toolRows()...)
	row := agentRow("LOOP", "t:m", "p")
	row.AllowedCategories = "weather"

	o := r.Run(context.Background(), runner.Call{Row: row, Sub: inv})
	if o.Result != "ERR:agent:step_limit:3" || !errors.Is(o.Err, ErrStepLimit) || !o.Ran {
		t.Fatalf("got %q ran=%v (%v), want ERR:agent:step_limit:3", o.Result, o.Ran, o.Err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d model requests, want 3", n)
	}
	// The tools of the last answer are not run: nobody would read their results.
	if n := len(inv.invocations()); n != 2 || len(o.Children) != 2 {
		t.Errorf("%d invocations, children %v; want 2", n, o.Children)
	}
	if o.PromptTokens != 30 || o.CompletionTokens != 3 {
		t.Errorf("tokens %d/%d, want 30/3 from the three requests", o.PromptTokens, o.CompletionTokens)
	}
}

// An answer calling more tools than Config.MaxToolCalls fails the call, and none of
// its tools runs: each would be an invocation the log records.
func TestTooManyToolCallsRunNone(t *testing.T) {
	calls := make([]agenttest.ToolCall, 4)
	for i := range calls {
		calls[i] = agenttest.ToolCall{Name: "WEATHER", Arguments: `{"args":"x"}`}
	}
	srv := agenttest.NewServer(t, agenttest.Reply{ToolCalls: calls}, agenttest.Answer("done"))
	r := newAgent(t, srv, Config{MaxToolCalls: 3})
	inv := newInvoker(toolRows()...)
	row := agentRow("MANY", "t:m", "p")
	row.AllowedCategories = "weather"

	o := r.Run(context.Background(), runner.Call{Row: row, Sub: inv})
	if o.Result != "ERR:agent:tool_calls:4>3" || !errors.Is(o.Err, ErrToolCalls) || !o.Ran {
		t.Fatalf("got %q ran=%v (%v), want ERR:agent:tool_calls:4>3", o.Result, o.Ran, o.Err)
	}
	if n := len(inv.invocations()); n != 0 || len(o.Children) != 0 {
		t.Errorf("%d invocations, children %v; want none", n, o.Children)
	}
}

// Tool results that take the conversation past Config.MaxRequestBytes fail the
// call: the tools after the one that took it past do not run, and nothing more is
// sent to the model, so what one call holds stays bounded.
func TestConversationOverRequestCapStops(t *testing.T) {
	calls := make([]agenttest.ToolCall, 5)
	for i := range calls {
		calls[i] = agenttest.ToolCall{Name: "WEATHER", Arguments: `{"args":"x"}`}
	}
	srv := agenttest.NewServer(t, agenttest.Reply{ToolCalls: calls}, agenttest.Answer("done"))
	r := newAgent(t, srv, Config{MaxRequestBytes: 4 << 10})
	inv := newInvoker(toolRows()...)
	inv.result = func(string, string) string { return strings.Repeat("r", 1<<10) }
	row := agentRow("BIG_TALK", "t:m", "p")
	row.AllowedCategories = "weather"

	o := r.Run(context.Background(), runner.Call{Row: row, Sub: inv})
	if o.Result != "ERR:agent:request_too_large:4096" || !errors.Is(o.Err, ErrRequestTooLarge) || !o.Ran {
		t.Fatalf("got %q ran=%v (%v), want ERR:agent:request_too_large:4096", o.Result, o.Ran, o.Err)
	}
	if n := len(inv.invocations()); n != 4 {
		t.Errorf("%d invocations, want 4: the fourth result takes the conversation past 4 KiB", n)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1", n)
	}
}

func TestNoProvider(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.Answer("x"))
	r := newAgent(t, srv, Config{})
	for target, want := range map[string]string{
		"grok-4.3": "ERR:agent:no_provider:grok-4.3",
		"T:m":      "ERR:agent:no_provider:T:m", // prefixes are case-sensitive
		"  ":       "ERR:agent:bad_model:the target names no model",
		"t:":       "ERR:agent:bad_model:no model after the routing prefix of t:",
	} {
		o := r.Run(context.Background(), runner.Call{Row: agentRow("A", target, "p")})
		kind := ErrNoProvider
		if strings.Contains(want, "bad_model") {
			kind = ErrBadModel
		}
		if o.Result != want || !errors.Is(o.Err, kind) || o.Ran {
			t.Errorf("target %q: %q ran=%v, want %q", target, o.Result, o.Ran, want)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
	// No provider table at all routes nothing.
	o := newAgent(t, nil, Config{}).Run(context.Background(), runner.Call{Row: agentRow("A", "gpt-4.1", "p")})
	if o.Result != "ERR:agent:no_provider:gpt-4.1" {
		t.Errorf("empty table: %q", o.Result)
	}
}

func TestProviderRoutingEndToEnd(t *testing.T) {
	gw := agenttest.NewServerFunc(t, func(agenttest.Request) agenttest.Reply { return agenttest.Answer("gw") })
	direct := agenttest.NewServerFunc(t, func(agenttest.Request) agenttest.Reply { return agenttest.Answer("direct") })
	ps, err := ParseProviders([]string{"gw:=" + gw.URL + "/api/", "gpt-=" + direct.URL + ",gw:openai/=" + direct.URL + "/openai"})
	if err != nil {
		t.Fatal(err)
	}
	r := newAgent(t, nil, Config{Providers: ps})
	for _, tc := range []struct{ target, answer, path, model string }{
		{"gw:anthropic/claude", "gw", "/api/chat/completions", "anthropic/claude"},
		{"gw:openai/gpt-4.1-mini", "direct", "/openai/chat/completions", "gw:openai/gpt-4.1-mini"},
		{"gpt-4.1", "direct", "/chat/completions", "gpt-4.1"},
	} {
		before := len(gw.Requests()) + len(direct.Requests())
		o := r.Run(context.Background(), runner.Call{Row: agentRow("A", tc.target, "p")})
		if o.Result != tc.answer {
			t.Errorf("%s: answered by %q, want %q", tc.target, o.Result, tc.answer)
			continue
		}
		srv := gw
		if tc.answer == "direct" {
			srv = direct
		}
		reqs := srv.Requests()
		last := reqs[len(reqs)-1]
		if last.Path != tc.path || last.Chat.Model != tc.model {
			t.Errorf("%s: sent %s model %q, want %s model %q", tc.target, last.Path, last.Chat.Model, tc.path, tc.model)
		}
		if after := len(gw.Requests()) + len(direct.Requests()); after != before+1 {
			t.Errorf("%s: %d requests, want one", tc.target, after-before)
		}
	}
}

func TestAuthSentToModelSecretNeverInOutcome(t *testing.T) {
	// The fake model echoes the credential it received in its answer, then in an
	// error body, then hands it to a tool.
	srv := agenttest.NewServerFunc(t, func(req agenttest.Request) agenttest.Reply {
		got := req.Header.Get("Authorization") + " " + req.RawQuery
		switch req.User() {
		case "answer":
			return agenttest.Answer("I saw " + got)
		case "error":
			return agenttest.Reply{Status: http.StatusUnauthorized, Body: `{"error":"bad key ` + got + `"}`}
		}
		if len(req.ToolResults()) > 0 {
			return agenttest.Answer("ok")
		}
		return agenttest.Call("WEATHER", `{"args":"`+keyValue+`"}`)
	})
	r := newAgent(t, srv, Config{TagSalt: "salt"})
	inv := newInvoker(toolRows()...)
	for _, auth := range []string{"bearer:" + keyVar, "query:key=" + keyVar} {
		row := agentRow("A", "t:m", "p")
		row.Auth, row.AllowedCategories = auth, "weather"
		before := len(srv.Requests())

		o := r.Run(context.Background(), runner.Call{Row: row, Body: "answer", Sub: inv})
		mustOK(t, o)
		if !strings.Contains(o.Result, runner.Redacted) || o.CredTag == "" {
			t.Errorf("%s: answer %q, tag %q; want the echo redacted and a tag", auth, o.Result, o.CredTag)
		}
		assertNoKey(t, o)
		o = r.Run(context.Background(), runner.Call{Row: row, Body: "error", Sub: inv})
		if !strings.HasPrefix(o.Result, "ERR:agent:401:") || !errors.Is(o.Err, ErrStatus) || o.Upstream != 401 || !o.Ran {
			t.Errorf("%s: got %q upstream %d", auth, o.Result, o.Upstream)
		}
		assertNoKey(t, o)
		o = r.Run(context.Background(), runner.Call{Row: row, Body: "tool", Sub: inv})
		mustOK(t, o)
		assertNoKey(t, o)
		o = r.Run(context.Background(), runner.Call{Row: row, Body: "shape", Sub: inv, Shape: true})
		mustOK(t, o)
		assertNoKey(t, o)

		reqs := srv.Requests()[before:]
		if len(reqs) != 4 {
			t.Fatalf("%s: %d requests, want 4", auth, len(reqs))
		}
		for _, req := range reqs {
			sent := req.Header.Get("Authorization") == "Bearer "+keyValue || req.RawQuery == "key="+keyValue
			if !sent {
				t.Errorf("%s: the model server did not get the credential: %v %q", auth, req.Header, req.RawQuery)
			}
		}
	}
	// The credential never reached another row: the tool got it redacted.
	for _, call := range inv.invocations() {
		if strings.Contains(call.Body, "S3CRET") || call.Body != runner.Redacted {
			t.Errorf("tool body %q, want %s", call.Body, runner.Redacted)
		}
	}
	// A variable outside the allow-list is refused before anything is sent.
	before := len(srv.Requests())
	row := agentRow("A", "t:m", "p")
	row.Auth = "bearer:DB_PASSWORD"
	o := r.Run(context.Background(), runner.Call{Row: row, Body: "answer"})
	if o.Result != "ERR:agent:A:ERR:auth:env_not_allowed:DB_PASSWORD" || !errors.Is(o.Err, ErrAuth) ||
		!errors.Is(o.Err, runner.ErrEnvNotAllowed) || o.Ran || len(srv.Requests()) != before {
		t.Errorf("refused variable: %q ran=%v (%v)", o.Result, o.Ran, o.Err)
	}
}

func assertNoKey(t *testing.T, o runner.Outcome) {
	t.Helper()
	shape, _ := json.Marshal(o.Shape)
	for _, f := range []string{o.Result, string(shape), fmt.Sprintf("%#v", o)} {
		if strings.Contains(f, "S3CRET") {
			t.Errorf("the credential leaked in %.300s", f)
		}
	}
}

func TestCostAndTokens(t *testing.T) {
	srv := agenttest.NewServer(t,
		agenttest.Reply{ToolCalls: []agenttest.ToolCall{{Name: "WEATHER", Arguments: `{}`}}, Usage: agenttest.Usage{PromptTokens: 1000, CompletionTokens: 100}},
		agenttest.Reply{Content: "done", Usage: agenttest.Usage{PromptTokens: 1500, CompletionTokens: 400}},
	)
	prices, err := ParsePrices([]string{"t:m=2/8", "t:*=100/100"})
	if err != nil {
		t.Fatal(err)
	}
	r := newAgent(t, srv, Config{Prices: prices})
	row := agentRow("A", "t:m", "p")
	row.AllowedCategories = "weather"
	o := r.Run(context.Background(), runner.Call{Row: row, Sub: newInvoker(toolRows()...)})
	mustOK(t, o)
	if o.PromptTokens != 2500 || o.CompletionTokens != 500 {
		t.Errorf("tokens %d/%d, want 2500/500", o.PromptTokens, o.CompletionTokens)
	}
	// 2500 × $2/M + 500 × $8/M
	if want := 0.009; math.Abs(o.CostUSD-want) > 1e-12 {
		t.Errorf("CostUSD %v, want %v", o.CostUSD, want)
	}
}

// A model server's usage is what it says, but a negative count does not take a
// receipt's cost below zero, and counts past any real call do not overflow it.
func TestHostileUsageKeepsTheCostSane(t *testing.T) {
	for _, c := range []struct {
		name                  string
		first, last           agenttest.Usage
		wantPrompt, wantCompl int64
	}{
		{"negative", agenttest.Usage{PromptTokens: -1 << 40, CompletionTokens: -5}, agenttest.Usage{PromptTokens: 10, CompletionTokens: 1}, 10, 1},
		{"overflowing", agenttest.Usage{PromptTokens: math.MaxInt64, CompletionTokens: math.MaxInt64}, agenttest.Usage{PromptTokens: math.MaxInt64, CompletionTokens: 1}, maxTokens, maxTokens},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := agenttest.NewServer(t,
				agenttest.Reply{ToolCalls: []agenttest.ToolCall{{Name: "WEATHER", Arguments: `{}`}}, Usage: c.first},
				agenttest.Reply{Content: "done", Usage: c.last},
			)
			prices, err := ParsePrices([]string{"t:m=2/8"})
			if err != nil {
				t.Fatal(err)
			}
			r := newAgent(t, srv, Config{Prices: prices})
			row := agentRow("A", "t:m", "p")
			row.AllowedCategories = "weather"
			o := r.Run(context.Background(), runner.Call{Row: row, Sub: newInvoker(toolRows()...)})
			mustOK(t, o)
			if o.PromptTokens != c.wantPrompt || o.CompletionTokens != c.wantCompl {
				t.Errorf("tokens %d/%d, want %d/%d", o.PromptTokens, o.CompletionTokens, c.wantPrompt, c.wantCompl)
			}
			if o.CostUSD < 0 || math.IsInf(o.CostUSD, 0) || math.IsNaN(o.CostUSD) {
				t.Errorf("CostUSD %v, want a finite cost of at least 0", o.CostUSD)
			}
		})
	}
}

func TestModelFailures(t *testing.T) {
	srv := agenttest.NewServerFunc(t, func(req agenttest.Request) agenttest.Reply {
		switch req.User() {
		case "500":
			return agenttest.Reply{Status: 500, Body: "overloaded"}
		case "badjson":
			return agenttest.Reply{Body: `{"choices":[`}
		case "nochoices":
			return agenttest.Reply{Body: `{"choices":[],"usage":{"prompt_tokens":3}}`}
		case "huge":
			return agenttest.Answer(strings.Repeat("x", 5000))
		case "block":
			return agenttest.Reply{Block: true}
		case "hugeerror":
			return agenttest.Reply{Status: 503, Body: strings.Repeat("e", 1001)}
		case "redirect":
			return agenttest.Reply{Status: http.StatusTemporaryRedirect, Body: "elsewhere"}
		case "parts":
			return agenttest.Reply{Body: `{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]}`}
		}
		return agenttest.Answer("?")
	})
	r := newAgent(t, srv, Config{Limits: runner.Limits{Timeout: time.Second, MaxResultBytes: 1000}, MaxResponseBytes: 2000})
	for body, want := range map[string]struct {
		result string
		kind   error
	}{
		"500":       {"ERR:agent:500:overloaded", ErrStatus},
		"redirect":  {"ERR:agent:307:elsewhere", ErrStatus},
		"hugeerror": {"ERR:agent:503:(a body of 1001 bytes, over the result cap of 1000, not shown)", ErrStatus},
		"badjson":   {"ERR:agent:bad_response:not a chat completion: unexpected end of JSON input", ErrBadResponse},
		"nochoices": {"ERR:agent:bad_response:no choices", ErrBadResponse},
		"huge":      {"ERR:agent:response_too_large:2000", ErrResponseTooLarge},
		"block":     {"ERR:agent:timeout:1s", ErrTimeout},
		"parts":     {"ab", nil},
	} {
		o := r.Run(context.Background(), runner.Call{Row: agentRow("A", "t:m", "p"), Body: body})
		if o.Result != want.result || !errors.Is(o.Err, want.kind) || (want.kind != nil && o.Err == nil) {
			t.Errorf("%s: got %q (%v), want %q", body, o.Result, o.Err, want.result)
		}
		if body != "block" && !o.Ran {
			t.Errorf("%s: Ran is false though the model server answered", body)
		}
	}
}

func TestShapeSendsNothing(t *testing.T) {
	srv := agenttest.NewServer(t)
	r := newAgent(t, srv, Config{})
	inv := newInvoker(append(toolRows(), &contract.Row{Key: "BLOCK", Content: "Be brief."})...)
	row := agentRow("A", "t:m", "You help.")
	row.Auth, row.Includes, row.AllowedCategories = "bearer:"+keyVar, "BLOCK", "weather"

	o := r.Run(context.Background(), runner.Call{Row: row, Body: "hi", Sub: inv, Shape: true})
	mustOK(t, o)
	if o.Ran || len(srv.Requests()) != 0 || len(inv.invocations()) != 0 {
		t.Fatalf("shape mode sent or ran something: ran=%v requests=%d", o.Ran, len(srv.Requests()))
	}
	if o.Shape["method"] != "POST" || o.Shape["url"] != srv.URL+"/v1/chat/completions" {
		t.Errorf("shape %v", o.Shape)
	}
	headers, _ := o.Shape["headers"].(map[string]any)
	if _, ok := headers["Authorization"]; ok || headers["Content-Type"] != "application/json" {
		t.Errorf("shape headers %v: want Content-Type and no Authorization", headers)
	}
	var body agenttest.ChatRequest
	if err := json.Unmarshal([]byte(o.Shape["body"].(string)), &body); err != nil {
		t.Fatal(err)
	}
	if body.Model != "m" || len(body.Messages) != 2 || body.Messages[0].Content != "Be brief.\n\nYou help." ||
		body.Messages[1].Content != "hi" || len(body.Tools) != 2 {
		t.Errorf("shape body %+v", body)
	}
	assertNoKey(t, o)
}

func TestNoInvokerForTools(t *testing.T) {
	srv := agenttest.NewServer(t)
	row := agentRow("A", "t:m", "p")
	row.AllowedCategories = "*"
	o := newAgent(t, srv, Config{}).Run(context.Background(), runner.Call{Row: row})
	if o.Result != "ERR:agent:no_invoker:allowed_categories" || !errors.Is(o.Err, ErrNoInvoker) || len(srv.Requests()) != 0 {
		t.Errorf("got %q (%v)", o.Result, o.Err)
	}
}

func TestToolOf(t *testing.T) {
	for _, tc := range []struct {
		row    contract.Row
		desc   string
		params string
		schema bool
	}{
		{contract.Row{Key: "NOW", Content: "# Return the current time.\n# WHEN_TO_USE: you need the time\n# ARGS: none"},
			"Return the current time.\nWhen to use: you need the time",
			`{"properties":{"args":{"description":"the arguments as one string, separated by | (none)","type":"string"}},"type":"object"}`, false},
		{contract.Row{Key: "S", Content: "# WHAT: typed", InputSchema: `{"type":"object","properties":{"q":{"type":"string"}}}`},
			"typed", `{"type":"object","properties":{"q":{"type":"string"}}}`, true},
		// A schema of another type than object cannot be a tool's parameters.
		{contract.Row{Key: "T", Content: "# WHAT: text", InputSchema: `{"type":"string"}`},
			"text", `{"properties":{"args":{"description":"the arguments as one string, separated by |","type":"string"}},"type":"object"}`, false},
	} {
		got := runner.ToolOf(&tc.row)
		if got.Key != tc.row.Key || got.Description != tc.desc || string(got.Parameters) != tc.params || got.Schema != tc.schema {
			t.Errorf("ToolOf(%s) = %+v (%s)", tc.row.Key, got, got.Parameters)
		}
	}
}

func TestLongKeysAreNotOffered(t *testing.T) {
	srv := agenttest.NewServer(t, agenttest.Answer("ok"))
	long := strings.Repeat("K", MaxToolNameLen+1)
	inv := newInvoker(&contract.Row{Key: long, Category: "c", Enabled: 1}, &contract.Row{Key: "SHORT", Category: "c", Enabled: 1})
	row := agentRow("A", "t:m", "p")
	row.AllowedCategories = "c"
	mustOK(t, newAgent(t, srv, Config{}).Run(context.Background(), runner.Call{Row: row, Sub: inv}))
	if got := srv.Requests()[0].ToolNames(); !reflect.DeepEqual(got, []string{"SHORT"}) {
		t.Errorf("offered %v, want [SHORT]", got)
	}
}

func TestConfigValidate(t *testing.T) {
	_, err := New(Config{Limits: runner.Limits{Timeout: -1, MaxResultBytes: -1}, MaxSteps: -1, MaxResponseBytes: -1})
	for _, want := range []string{"Env is required", "Timeout", "MaxSteps", "MaxResponseBytes", "MaxResultBytes"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New: %v; want it to name %s", err, want)
		}
	}
}

func TestInvokerFailures(t *testing.T) {
	srv := agenttest.NewServerFunc(t, func(agenttest.Request) agenttest.Reply {
		r := agenttest.Call("WEATHER", `{"args":"Paris"}`)
		r.Usage = agenttest.Usage{PromptTokens: 7, CompletionTokens: 2}
		return r
	})
	r := newAgent(t, srv, Config{})
	row := agentRow("A", "t:m", "p")
	row.AllowedCategories = "weather"

	inv := newInvoker(toolRows()...)
	inv.toolsErr = errors.New("directory unavailable")
	o := r.Run(context.Background(), runner.Call{Row: row, Sub: inv})
	if o.Result != "ERR:agent:tools:directory unavailable" || !errors.Is(o.Err, ErrTools) || o.Ran || len(srv.Requests()) != 0 {
		t.Errorf("Tools failing: %q ran=%v", o.Result, o.Ran)
	}

	inv = newInvoker(toolRows()...)
	inv.fail = errors.New("bus down")
	o = r.Run(context.Background(), runner.Call{Row: row, Sub: inv})
	if o.Result != "ERR:agent:tool:WEATHER:bus down" || !errors.Is(o.Err, ErrTool) || !o.Ran || o.PromptTokens != 7 {
		t.Errorf("Invoke failing: %q ran=%v tokens=%d", o.Result, o.Ran, o.PromptTokens)
	}

	// The caller's context ending during a tool call is a cancellation.
	ctx, cancel := context.WithCancel(context.Background())
	inv = newInvoker(toolRows()...)
	inv.result = func(string, string) string { cancel(); return "late" }
	o = r.Run(ctx, runner.Call{Row: row, Sub: inv})
	if o.Result != "ERR:agent:canceled:context canceled" || !errors.Is(o.Err, runner.ErrCanceled) {
		t.Errorf("canceled during a tool: %q", o.Result)
	}
}
