package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// The progress reader counts rows as they are sent, a byte at a time here: top-level objects of an array
// (braces, brackets and quotes inside strings do not count), non-blank NDJSON lines.
func TestImportProgressCountsRows(t *testing.T) {
	var arr strings.Builder
	arr.WriteString("[\n")
	for i := range 25 {
		if i > 0 {
			arr.WriteString(",\n")
		}
		fmt.Fprintf(&arr, `{"key":"K%d","content":"} { ] [ \" \\\\","input_schema":"{\"type\":\"object\"}","x":[{"y":1}]}`, i)
	}
	arr.WriteString("\n]\n")
	ndjson := "\n" + `{"key":"A"}` + "\n\n  \n" + `{"key":"B"}` + "\n" + `{"key":"C"}` // no final newline

	for _, tc := range []struct {
		name  string
		body  string
		array bool
		want  []string
	}{
		{"array", arr.String(), true, []string{"import: sent 10 rows (", "import: sent 20 rows (", "import: sent all 25 rows ("}},
		{"ndjson", ndjson, false, []string{"import: sent all 3 rows ("}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			p := newImportProgress(iotest.OneByteReader(strings.NewReader(tc.body)), &out, tc.array)
			p.every = 10
			got, err := io.ReadAll(p)
			p.finish()
			if err != nil || string(got) != tc.body {
				t.Fatalf("the body was changed on its way: %v", err)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("progress:\n%s\nwant lines starting %q", out.String(), tc.want)
			}
			for i, l := range lines {
				if !strings.HasPrefix(l, tc.want[i]) {
					t.Fatalf("progress:\n%s\nwant lines starting %q", out.String(), tc.want)
				}
			}
		})
	}
}
