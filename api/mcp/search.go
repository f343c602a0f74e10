package mcp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/projector"
	"github.com/capdir/capdir/projector/ask"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Search mode: a directory of thousands of rows is too large to list as tools
// (see README, MCP, for the sizes), so a session opened with ?mode=search lists
// three tools whatever the directory holds, and fetches one contract at a time:
//
//	search   {"query":"plain words","limit":10}   matching rows, one line each
//	describe {"key":"KEY"}                         the row's contract document (markdown)
//	call     {"key":"KEY","args":"a|b" or {…}}     invoke it, as a listed tool is invoked

// Searcher ranks the rows matching query, best first, calling visit with each
// until visit returns false or the rows run out. visible, when not nil, says
// which rows the caller may see, by key and category: a Searcher ranks only
// those, so that a narrow scope is not crowded out of the results by rows it
// cannot see and no rank depends on them. visit still keeps only the rows the
// session's credential is offered, up to the call's limit: a Searcher must not be
// relied on to know about credentials. The row is valid only during the call.
// WordMatch is the default; an index (the ask index) plugs in as Config.Search.
type Searcher func(ctx context.Context, query string, visible func(key, category string) bool, visit func(*contract.Row) bool) error

// WordMatch is the Searcher that reads every enabled row: a row matches when a
// word of the query starts a word of its key or its description (the # WHAT:
// line), ignoring case ("model" finds GROK_MODELS); words of one letter and a few
// of the commonest English words are ignored. Rows matching more of the words
// come first, then planner order. It costs one pass over the directory per search.
func WordMatch(p *projector.Projector) Searcher {
	return func(ctx context.Context, query string, visible func(key, category string) bool, visit func(*contract.Row) bool) error {
		words := queryWords(query)
		type hit struct {
			score int
			entry contract.RegistryEntry
		}
		var hits []hit
		enabled := 1
		err := p.Each(projector.Filter{Enabled: &enabled}, func(r *contract.Row) error {
			if visible != nil && !visible(r.Key, r.Category) {
				return ctx.Err()
			}
			text := textWords(r.Key + " " + contract.Description(r))
			score := 0
			for _, w := range words {
				if slices.ContainsFunc(text, func(t string) bool { return strings.HasPrefix(t, w) }) {
					score++
				}
			}
			if score > 0 {
				hits = append(hits, hit{score, contract.NewRegistryEntry(r)})
			}
			return ctx.Err()
		})
		if err != nil {
			return err
		}
		entries := make([]contract.RegistryEntry, len(hits))
		score := make(map[string]int, len(hits))
		for i, h := range hits {
			entries[i], score[h.entry.Key] = h.entry, h.score
		}
		contract.SortRegistry(entries)
		slices.SortStableFunc(entries, func(a, b contract.RegistryEntry) int { return cmp.Compare(score[b.Key], score[a.Key]) })
		for _, e := range entries {
			row, _, err := p.Row(e.Key)
			if err != nil {
				continue // deleted since
			}
			if !visit(&row) {
				return nil
			}
		}
		return nil
	}
}

// textWords are s's words in lower case: runs of letters and digits (a key's
// underscores separate words too).
func textWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// stopWords are the words a query is searched without.
var stopWords = []string{"an", "and", "the", "for", "in", "of", "on", "or", "to", "at", "by", "is", "it", "me", "my", "with", "from", "what", "how"}

// queryWords are the query's distinct words worth searching for.
func queryWords(q string) []string {
	var out []string
	for _, w := range textWords(q) {
		if len(w) > 1 && !slices.Contains(stopWords, w) && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// Search limits.
const (
	defaultSearchLimit = 10
	maxSearchLimit     = 50
	maxQueryLen        = 1024
)

var (
	searchSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"query":{"type":"string","description":"plain words saying what you need, e.g. \"current time\""},` +
		`"limit":{"type":"integer","minimum":1,"maximum":50,"description":"at most this many rows (default 10)"}},` +
		`"required":["query"]}`)
	describeSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"key":{"type":"string","description":"a key search returned"}},"required":["key"]}`)
	callSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"key":{"type":"string","description":"a key search returned"},` +
		`"args":{"type":["string","object"],"description":"the row's arguments: one string separated by | as its ARGS line says, ` +
		`or, for a row with an input schema, the object that schema describes"}},"required":["key"]}`)
)

// addSearchTools lists search mode's three tools.
func (s *session) addSearchTools() {
	s.srv.AddTool(&sdk.Tool{Name: "search", InputSchema: searchSchema,
		Description: "Find capabilities by plain words: each match is one line, KEY — what it does (its arguments). " +
			"Then describe a KEY to read its contract, or call it."}, s.search)
	s.srv.AddTool(&sdk.Tool{Name: "describe", InputSchema: describeSchema,
		Description: "The contract document of one capability: what it does, when to use it, its arguments and output, how to call it."}, s.describe)
	s.srv.AddTool(&sdk.Tool{Name: "call", InputSchema: callSchema,
		Description: "Run one capability by its key with its arguments. The result carries the receipt's invocation_id."}, s.call)
}

// decodeArgs decodes a tool's arguments strictly into v: one JSON object of the
// tool's fields. The error is the tool error's literal.
func decodeArgs(tool string, raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badArguments(tool, strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

func (s *session) search(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := decodeArgs("search", req.Params.Arguments, &in); err != nil {
		return toolError(err.Error()), nil
	}
	switch {
	case strings.TrimSpace(in.Query) == "":
		return toolError(badArguments("search", `"query" must hold a word or more`).Error()), nil
	case len(in.Query) > maxQueryLen:
		return toolError(badArguments("search", fmt.Sprintf(`"query" is %d bytes; at most %d`, len(in.Query), maxQueryLen)).Error()), nil
	case in.Limit < 0 || in.Limit > maxSearchLimit:
		return toolError(badArguments("search", fmt.Sprintf(`"limit" must be from 1 to %d`, maxSearchLimit)).Error()), nil
	case in.Limit == 0:
		in.Limit = defaultSearchLimit
	}
	rows := []contract.RegistryEntry{}
	var visible func(key, category string) bool // the owner sees every row
	if v := s.caller.viewer; v.Role != contract.RoleOwner {
		visible = func(key, category string) bool { return v.InScope(&contract.Row{Key: key, Category: category}) }
	}
	err := s.h.cfg.Search(ctx, in.Query, visible, func(r *contract.Row) bool {
		if offers(s.caller.viewer, r) {
			rows = append(rows, contract.NewRegistryEntry(r))
		}
		return len(rows) < in.Limit
	})
	if err != nil {
		return toolError("ERR:mcp:search:" + err.Error()), nil
	}
	var text strings.Builder
	for _, e := range rows {
		fmt.Fprintf(&text, "%s — %s", e.Key, e.Description)
		if e.Args != "" {
			fmt.Fprintf(&text, " (args: %s)", e.Args)
		}
		text.WriteByte('\n')
	}
	if len(rows) == 0 {
		text.WriteString("no capability matches; try other words\n")
	}
	return &sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: text.String()}},
		StructuredContent: map[string]any{"count": len(rows), "rows": rows},
	}, nil
}

func (s *session) describe(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var in struct {
		Key string `json:"key"`
	}
	if err := decodeArgs("describe", req.Params.Arguments, &in); err != nil {
		return toolError(err.Error()), nil
	}
	row, _, err := s.h.cfg.Projector.Row(in.Key)
	if err != nil || !s.caller.viewer.Discovers(&row) {
		// No row, a disabled one or one outside the token's scope read alike.
		return toolError(notFoundText(in.Key)), nil
	}
	doc := contract.NewDocument(&row, contract.DocContext{
		BaseURL: s.h.cfg.PublicURL, Viewer: s.caller.viewer, Auth: runner.DescribeAuth(row.Auth),
		BreakerOpen: breaker.Message(row.Key, s.h.cfg.BreakerThreshold),
		Failures:    runner.TableOf(s.h.cfg.Dispatcher, &row),
	})
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(doc.Markdown())}}}, nil
}

func (s *session) call(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var in struct {
		Key  string          `json:"key"`
		Args json.RawMessage `json:"args"`
	}
	if err := decodeArgs("call", req.Params.Arguments, &in); err != nil {
		return toolError(err.Error()), nil
	}
	body, err := callBody(in.Args)
	if err != nil {
		return toolError(err.Error()), nil
	}
	return s.h.invoke(ctx, s.caller, req, in.Key, body), nil
}

// callBody is what call's args invoke the row with: a string as the pipe body,
// an object as the arguments object (a row with its own input schema), nothing
// as the empty body.
func callBody(args json.RawMessage) (runner.Input, error) {
	args = bytes.TrimSpace(args)
	var in runner.Input
	switch {
	case len(args) == 0 || string(args) == "null":
		return in, nil
	case args[0] == '"':
		err := json.Unmarshal(args, &in.Body)
		return in, err
	case args[0] == '{':
		var buf bytes.Buffer
		if err := json.Compact(&buf, args); err != nil {
			return in, badArguments("call", `"args": `+err.Error())
		}
		in.Args = buf.Bytes()
		return in, nil
	}
	return in, badArguments("call", `"args" must be a string (the arguments separated by |) or an object (for a row with an input schema)`)
}

// AskSearch is the Searcher over the ask index (projector/ask): rows ranked for
// plain words by key, category and docstring, read from p as visit needs them.
func AskSearch(x *ask.Index, p *projector.Projector) Searcher {
	return func(ctx context.Context, query string, visible func(key, category string) bool, visit func(*contract.Row) bool) error {
		a, err := x.Search(ask.Query{Text: query, Limit: ask.MaxLimit, Visible: visible})
		if err != nil {
			return err
		}
		for _, r := range a.Results {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			row, _, err := p.Row(r.Key)
			if err != nil {
				continue // deleted since it was ranked
			}
			if !visit(&row) {
				return nil
			}
		}
		return nil
	}
}
