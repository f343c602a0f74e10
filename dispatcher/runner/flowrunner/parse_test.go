package flowrunner

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/capdir/capdir/contract/failure"
)

func call(name, key, body, bind string) Step {
	return Step{Name: name, Key: key, Body: body, Bind: bind}
}

func fan(name, bind string, branches ...Branch) Step {
	return Step{Name: name, Branches: branches, Bind: bind}
}

func br(name, key, body, bind string) Branch {
	return Branch{Name: name, Key: key, Body: body, Bind: bind}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    []Step
	}{
		{"one step", "ECHO: hi", []Step{call("1", "ECHO", "hi", "")}},
		{"empty body", "NOW:", []Step{call("1", "NOW", "", "")}},
		{"steps", "A: $1 > B: $PREV > C: x",
			[]Step{call("1", "A", "$1", ""), call("2", "B", "$PREV", ""), call("3", "C", "x", "")}},
		{"steps on lines", "A: $1\n> B: blooio|$2|$PREV\n",
			[]Step{call("1", "A", "$1", ""), call("2", "B", "blooio|$2|$PREV", "")}},
		{"docs removed", "# WHAT: two steps\n  # ARGS: x\nA: $1\n# between\n> B: $PREV\n",
			[]Step{call("1", "A", "$1", ""), call("2", "B", "$PREV", "")}},
		{"whitespace", " \t A \t:\t x  y \n >\n\n B:y\t=>\tBY \r\n",
			[]Step{call("1", "A", "x  y", ""), call("2", "B", "y", "BY")}},
		{"body spans lines", "A: line one\nline two\n> B: z",
			[]Step{call("1", "A", "line one\nline two", ""), call("2", "B", "z", "")}},
		{"binding", "A: $1 => FIRST > B: $FIRST|$PREV => _2ND",
			[]Step{call("1", "A", "$1", "FIRST"), call("2", "B", "$FIRST|$PREV", "_2ND")}},
		{"binding without spaces", "A: x=>X>B: y",
			[]Step{call("1", "A", "x", "X"), call("2", "B", "y", "")}},
		{"binding empty body", "NOW: => T", []Step{call("1", "NOW", "", "T")}},
		{"colon in body", "A: http://x:80/a|b:c", []Step{call("1", "A", "http://x:80/a|b:c", "")}},
		{"fan-out", "{ A: x | B: y }",
			[]Step{fan("1", "", br("1.A", "A", "x", ""), br("1.B", "B", "y", ""))}},
		{"fan-out bindings", "P: $1 > { A: $PREV => AX | B: y => BY } => BOTH > C: $AX|$BY|$BOTH",
			[]Step{call("1", "P", "$1", ""),
				fan("2", "BOTH", br("2.A", "A", "$PREV", "AX"), br("2.B", "B", "y", "BY")),
				call("3", "C", "$AX|$BY|$BOTH", "")}},
		{"fan-out of one", "{A:x}", []Step{fan("1", "", br("1.A", "A", "x", ""))}},
		{"fan-out repeated key", "{ A: 1 | B: 2 | A: 3 | A: 4 }",
			[]Step{fan("1", "", br("1.A", "A", "1", ""), br("1.B", "B", "2", ""),
				br("1.A.2", "A", "3", ""), br("1.A.3", "A", "4", ""))}},
		{"fan-out on lines", "{\n  A: x\n  | B: y\n}\n> C: $PREV",
			[]Step{fan("1", "", br("1.A", "A", "x", ""), br("1.B", "B", "y", "")), call("2", "C", "$PREV", "")}},
		{"braces protect > in a body", `A: {"q":"a>b"} > B: y`,
			[]Step{call("1", "A", `{"q":"a>b"}`, ""), call("2", "B", "y", "")}},
		{"braces protect => in a body", `A: {"f":"x=>y"}`, []Step{call("1", "A", `{"f":"x=>y"}`, "")}},
		{"nested braces in a branch", `{ A: {"a":{"b":"x|y"}} | B: {} => BY }`,
			[]Step{fan("1", "", br("1.A", "A", `{"a":{"b":"x|y"}}`, ""), br("1.B", "B", "{}", "BY"))}},
		{"> inside a fan-out", "{ A: x > y | B: z }",
			[]Step{fan("1", "", br("1.A", "A", "x > y", ""), br("1.B", "B", "z", ""))}},
		{"pipes in a step body", "A: a|b||c", []Step{call("1", "A", "a|b||c", "")}},
		{"key characters", "a-B_9: x", []Step{call("1", "a-B_9", "x", "")}},
		{"# inside a line is text", "A: #1 > B: x # y",
			[]Step{call("1", "A", "#1", ""), call("2", "B", "x # y", "")}},
		{"sample row", "# Phase C of the inbound turn: given the full agent output text in $1, extract the\n# LAST [REPLY], send via blooio to $2, return the send result.\n# $1=agent output text. $2=recipient phone.\nLAST_REPLY_OF: $1\n> SEND_BY_CHANNEL: blooio|$2|$PREV",
			[]Step{call("1", "LAST_REPLY_OF", "$1", ""), call("2", "SEND_BY_CHANNEL", "blooio|$2|$PREV", "")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(tt.content)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.content, err)
			}
			if !reflect.DeepEqual(p.Steps, tt.want) {
				t.Fatalf("Parse(%q)\n got %#v\nwant %#v", tt.content, p.Steps, tt.want)
			}
			again, err := Parse(p.String())
			if err != nil || !reflect.DeepEqual(again, p) {
				t.Fatalf("printed %q parses to %#v, %v", p.String(), again, err)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name, content, want string
		kind                error
	}{
		{"empty", "", "ERR:flow:empty", ErrEmpty},
		{"blank", " \n\t\n", "ERR:flow:empty", ErrEmpty},
		{"docs only", "# WHAT: nothing\n# ARGS: none", "ERR:flow:empty", ErrEmpty},
		{"no colon", "A: x > NOCOLON > C: y", "ERR:flow:bad_step:NOCOLON", ErrBadStep},
		{"no colon first", "just text", "ERR:flow:bad_step:just text", ErrBadStep},
		{"binding only", "A: x > => X", "ERR:flow:bad_step:=> X", ErrBadStep},
		{"missing key", ": x", "ERR:flow:bad_key:: x", ErrBadKey},
		{"key with space", "MY KEY: x", "ERR:flow:bad_key:MY KEY: x", ErrBadKey},
		{"key with dot", "A.B: x", "ERR:flow:bad_key:A.B: x", ErrBadKey},
		{"key with brace", "A{x: y}", "ERR:flow:bad_key:A{x: y}", ErrBadKey},
		{"key too long", strings.Repeat("K", 129) + ": x", "ERR:flow:bad_key:" + strings.Repeat("K", 129) + ": x", ErrBadKey},
		{"missing key in a branch", "{ A: x | : y }", "ERR:flow:bad_key:: y", ErrBadKey},
		{"no colon in a branch", "{ A: x | y }", "ERR:flow:bad_step:y", ErrBadStep},
		{"empty step between", "A: x > > B: y", "ERR:flow:empty_step:2", ErrEmptyStep},
		{"trailing >", "A: x >", "ERR:flow:empty_step:2", ErrEmptyStep},
		{"leading >", "> A: x", "ERR:flow:empty_step:1", ErrEmptyStep},
		{"binding lower case", "A: x => name", "ERR:flow:bad_binding:name", ErrBadBinding},
		{"binding digit first", "A: x => 1X", "ERR:flow:bad_binding:1X", ErrBadBinding},
		{"binding empty", "A: x =>", "ERR:flow:bad_binding:", ErrBadBinding},
		{"binding two words", "A: x => A B", "ERR:flow:bad_binding:A B", ErrBadBinding},
		{"binding twice", "A: x => X => Y", "ERR:flow:bad_binding:X => Y", ErrBadBinding},
		{"binding PREV", "A: x => PREV", "ERR:flow:bad_binding:PREV", ErrBadBinding},
		{"binding in a branch", "{ A: x => ax }", "ERR:flow:bad_binding:ax", ErrBadBinding},
		{"binding a fan-out", "{ A: x } => b", "ERR:flow:bad_binding:b", ErrBadBinding},
		{"duplicate binding", "A: x => X > B: y => X", "ERR:flow:duplicate_binding:X", ErrDuplicateBinding},
		{"duplicate binding in a fan-out", "{ A: x => X | B: y => X }", "ERR:flow:duplicate_binding:X", ErrDuplicateBinding},
		{"unclosed brace", "A: x > { B: y | C: z", "ERR:flow:unbalanced_braces:{ B: y | C: z", ErrUnbalanced},
		{"unopened brace", "A: x } > B: y", "ERR:flow:unbalanced_braces:A: x }", ErrUnbalanced},
		{"unclosed brace in a body", `A: {"a":1`, `ERR:flow:unbalanced_braces:A: {"a":1`, ErrUnbalanced},
		{"text after a fan-out", "{ A: x } B: y", "ERR:flow:bad_fanout:{ A: x } B: y", ErrBadFanout},
		{"two fan-outs in a step", "{ A: x } { B: y }", "ERR:flow:bad_fanout:{ A: x } { B: y }", ErrBadFanout},
		{"nested fan-out", "{ A: x | { B: y | C: z } }", "ERR:flow:nested_fanout:{ B: y | C: z }", ErrNestedFanout},
		{"empty fan-out", "A: x > { }", "ERR:flow:empty_branch:{ }", ErrEmptyBranch},
		{"empty branch", "{ A: x | }", "ERR:flow:empty_branch:{ A: x | }", ErrEmptyBranch},
		{"empty branch first", "{ | A: x }", "ERR:flow:empty_branch:{ | A: x }", ErrEmptyBranch},
		{"empty branch middle", "{ A: x || B: y }", "ERR:flow:empty_branch:{ A: x || B: y }", ErrEmptyBranch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(tt.content)
			if err == nil {
				t.Fatalf("Parse(%q) = %q, want %s", tt.content, p.String(), tt.want)
			}
			var re *failure.Error
			if !errors.As(err, &re) || re.Literal != tt.want || !errors.Is(err, tt.kind) {
				t.Fatalf("Parse(%q): %v; want %s matching %v", tt.content, err, tt.want, tt.kind)
			}
		})
	}
}

func TestPlanString(t *testing.T) {
	p, err := Parse("# doc\nA:$1=>X\n>{B:$X|C:  y =>CY}=>BOTH>D:")
	if err != nil {
		t.Fatal(err)
	}
	const want = "A: $1 => X\n> { B: $X | C: y => CY } => BOTH\n> D:"
	if got := p.String(); got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	if n := p.Invocations(); n != 4 {
		t.Fatalf("Invocations() = %d, want 4", n)
	}
}
