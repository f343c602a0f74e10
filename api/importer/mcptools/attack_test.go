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

// An upstream's tool whose key falls under the prefix of an upstream whose name
// is as long or longer is refused, naming no key (so a row made under it before
// is pruned); under a shorter name's prefix, the key is the upstream's own.
func TestDisownKeysOfOtherUpstreams(t *testing.T) {
	tools := []*mcp.Tool{{Name: "x_pay"}, {Name: "pay"}}
	items := Disown(Items("up", tools, 0), "up", []string{"UP", "up", "up_x", "u"})
	if items[0].Row != nil || items[0].Key != "" || !strings.Contains(items[0].Refused, "UP_X_PAY") {
		t.Errorf("x_pay beside up_x: %+v", items[0])
	}
	if items[1].Row != nil || !strings.Contains(items[1].Refused, "upstream UP") {
		t.Errorf("pay beside UP, the same prefix: %+v", items[1])
	}
	items = Disown(Items("up", []*mcp.Tool{{Name: "x"}}, 0), "up", []string{"up", "up_x"})
	if items[0].Row != nil || !strings.Contains(items[0].Refused, "UP_X,") {
		t.Errorf("x beside up_x, its bare key: %+v", items[0])
	}
	// A name whose key prefix importer.Key collapses ("up__x" makes UP_X_… keys)
	// owns the prefix its keys have.
	items = Disown(Items("up", tools, 0), "up", []string{"up", "up__x"})
	if items[0].Row != nil || !strings.Contains(items[0].Refused, "prefix UP_X_ of the upstream up__x") {
		t.Errorf("x_pay beside up__x: %+v", items[0])
	}
	items = Disown(Items("up_x", tools, 0), "up_x", []string{"up", "up_x"})
	if items[0].Row == nil || items[1].Row == nil {
		t.Errorf("up_x's tools beside up: %+v", items)
	}
}
