package mcprunner

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseUpstreams(t *testing.T) {
	got, err := ParseUpstreams(
		[]string{`gh=https://mcp.example/v1 headers:{"Authorization":"Bearer $GITHUB_TOKEN"}`, "local=http://127.0.0.1:9000/mcp"},
		[]string{"files=mcp-files --root /srv  --ro"})
	want := Static{
		"gh":    {Name: "gh", URL: "https://mcp.example/v1", Auth: `headers:{"Authorization":"Bearer $GITHUB_TOKEN"}`},
		"local": {Name: "local", URL: "http://127.0.0.1:9000/mcp"},
		"files": {Name: "files", Command: []string{"mcp-files", "--root", "/srv", "--ro"}},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, %v", got, err)
	}
	for _, bad := range [][2][]string{
		{{"gh"}, nil}, {{"=http://x"}, nil}, {{"a/b=http://x"}, nil}, {{"gh=ftp://x"}, nil},
		{{"gh=http://"}, nil}, {{"gh=http://x nope:X"}, nil}, {nil, {"files="}},
		{{"gh=http://x"}, {"gh=run"}},
	} {
		if _, err := ParseUpstreams(bad[0], bad[1]); !errors.Is(err, ErrBadUpstream) {
			t.Errorf("%q %q: %v, want ErrBadUpstream", bad[0], bad[1], err)
		}
	}
}
