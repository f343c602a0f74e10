package mcptools

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A hostile upstream's tool names: control characters, invalid UTF-8, other
// Unicode white space, an over-long name, a name of the shape of a SOURCE line.
// None becomes a row whose target, content or SOURCE line carries it.
func TestItemsRefuseHostileToolNames(t *testing.T) {
	for _, name := range []string{
		"clear\x1b[2Jscreen", "nul\x00byte", "bell\a", "del\x7f", "bad\xffutf8", "line\u2028sep", "nbsp\u00a0name",
		"vtab\vname", "c1\u0085next", strings.Repeat("n", 300),
	} {
		items := Items("up", []*mcp.Tool{{Name: name}}, 0)
		if len(items) != 1 || items[0].Row != nil || items[0].Refused == "" {
			t.Errorf("tool %q: %+v; want it refused", name, items)
			continue
		}
		if strings.ContainsAny(items[0].Refused, "\x00\x1b\a\x7f\u2028\u0085") {
			t.Errorf("tool %q: the refusal carries the hostile characters: %q", name, items[0].Refused)
		}
	}
	ok := Items("up", []*mcp.Tool{{Name: "get.issue-v2_x"}}, 0)
	if ok[0].Row == nil {
		t.Fatalf("a plain tool name was refused: %+v", ok[0])
	}
}
