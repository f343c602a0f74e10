package flowrunner

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/capdir/capdir/contract/failure"
)

// FuzzParse: Parse never panics; a refusal is an ERR:flow: literal matching a
// sentinel; an accepted plan prints to text that parses back to the same plan and
// prints the same again. Seeds: below and testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		"ECHO: hi",
		"A: $1 > B: $PREV => X > C: $X",
		"LAST_REPLY_OF: $1\n> SEND_BY_CHANNEL: blooio|$2|$PREV",
		"# doc\nA: x\n# more\n> B: y",
		"{ A: x => AX | B: y => BY } => BOTH > C: $PREV",
		`{ A: {"a":{"b":"x|y"}} | B: x > y }`,
		"A: x => X => Y",
		"{ A: x | { B: y } }",
		"A: {x > B: y",
		"A: x } > B",
		"{ A: 1 | A: 2 }",
		"A:=>X",
		"A: x=\n> B: y",
		"\v#A: x",
		"A:\n\v#y",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		p, err := Parse(content)
		if err != nil {
			var re *failure.Error
			if !errors.As(err, &re) || !strings.HasPrefix(re.Literal, "ERR:flow:") || re.Kind == nil {
				t.Fatalf("Parse(%q): %v is not an ERR:flow: literal", content, err)
			}
			return
		}
		if len(p.Steps) == 0 {
			t.Fatalf("Parse(%q) accepted a plan with no steps", content)
		}
		printed := p.String()
		again, err := Parse(printed)
		if err != nil {
			t.Fatalf("Parse(%q) printed %q, which does not parse: %v", content, printed, err)
		}
		if !reflect.DeepEqual(again, p) {
			t.Fatalf("Parse(%q) printed %q, which parses to\n%#v\nnot\n%#v", content, printed, again, p)
		}
		if again.String() != printed {
			t.Fatalf("printing is not stable: %q then %q", printed, again.String())
		}
	})
}
