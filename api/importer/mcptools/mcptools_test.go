package mcptools

import (
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestItems(t *testing.T) {
	no := false
	tools := []*mcp.Tool{
		{Name: "get_issue", Description: "Get an issue\n of a repository.", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}, "required": []any{"n"}}},
		{Name: "delete_repo", Annotations: &mcp.ToolAnnotations{}},
		{Name: "list", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		{Name: "append", Annotations: &mcp.ToolAnnotations{DestructiveHint: &no}},
		{Name: "has space"},
		{Name: "ünïcode"},
		{Name: "N_CODE"},
		{Name: strings.Repeat("long", 100)},
		{Name: "bad_schema", InputSchema: map[string]any{"type": 12}},
	}
	items := Items("gh", tools, 0)
	got := map[string]string{}
	for _, it := range items {
		switch {
		case it.Row != nil:
			what, source, _ := strings.Cut(it.Row.Content, "\n")
			if source != `# SOURCE: mcp upstream="gh" op=`+it.Source {
				t.Errorf("%s: SOURCE line %q", it.Source, source)
			}
			got[it.Source] = it.Row.Key + " " + it.Row.Runner + " " + it.Row.Target + " " + what + " " + it.Row.InputSchema + " " + strings.Join(it.Notes, ";")
		default:
			got[it.Source] = "refused: " + it.Refused
		}
	}
	want := map[string]string{
		"get_issue":   `GH_GET_ISSUE mcp gh/get_issue # WHAT: Get an issue of a repository. {"properties":{"n":{"type":"integer"}},"required":["n"],"type":"object"} `,
		"delete_repo": `GH_DELETE_REPO mcp gh/delete_repo # WHAT: The delete_repo tool. {"type":"object"} the tool says it is destructive (destructiveHint): mark the row sensitive so its calls wait for approval`,
		"list":        `GH_LIST mcp gh/list # WHAT: The list tool. {"type":"object"} `,
		"append":      `GH_APPEND mcp gh/append # WHAT: The append tool. {"type":"object"} `,
		"has space":   "refused: the tool name holds white space or a control character (U+0020)",
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s:\n got %s\nwant %s", name, got[name], w)
		}
	}
	for _, name := range []string{strings.Repeat("long", 100)[:MaxToolName], "bad_schema"} { // a report shows a long name clipped
		if !strings.HasPrefix(got[name], "refused: ") {
			t.Errorf("%.20s: %s, want refused", name, got[name])
		}
	}
	if got["ünïcode"] != `GH_N_CODE mcp gh/ünïcode # WHAT: The ünïcode tool. {"type":"object"} ` || got["N_CODE"] != `refused: maps to the key GH_N_CODE, as the tool "ünïcode" does` {
		t.Errorf("a key two tools map to: %s / %s", got["ünïcode"], got["N_CODE"])
	}
}

// 10k tools: the first DefaultMaxTools become rows, every one past them is
// refused with the reason.
func TestItemsCapped(t *testing.T) {
	tools := make([]*mcp.Tool, 10_000)
	for i := range tools {
		tools[i] = &mcp.Tool{Name: "t" + strconv.Itoa(i)}
	}
	var rows, refused int
	for _, it := range Items("big", tools, 0) {
		if it.Row != nil {
			rows++
		} else if strings.Contains(it.Refused, "over the 1000 tools") {
			refused++
		}
	}
	if rows != DefaultMaxTools || refused != 10_000-DefaultMaxTools {
		t.Fatalf("%d rows, %d refused", rows, refused)
	}
}
