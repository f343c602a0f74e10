package visible

import "testing"

func TestAppendAndString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text, é, 日本, 👨\u200d👩\u200d👧, ک\u200cه", "plain text, é, 日本, 👨\u200d👩\u200d👧, ک\u200cه"},
		{"lines\n\tindented", "lines\n\tindented"},
		{"\x1b[2J\x1b]0;title\x07", `\x1b[2J\x1b]0;title\x07`},
		{"real\rfake", `real\rfake`},
		{"\x00\x08\x7f", `\x00\x08\x7f`},
		{"\u009b31m", `\u009b31m`}, // C1 CSI, as UTF-8
		{"\x9b31m", `\x9b31m`},     // C1 CSI, a lone byte
		{"alice|1\u202e0000", `alice|1\u202e0000`},
		{"a\u2066b\u2069c\u202ad\u202ce", `a\u2066b\u2069c\u202ad\u202ce`},
		{"\u200ex\u200fy\u061cz", `\u200ex\u200fy\u061cz`},
		{"pay\u200bpal\u2060\ufeff", `pay\u200bpal\u2060\ufeff`},
	} {
		if got := string(Append(nil, []byte(c.in))); got != c.want {
			t.Errorf("Append(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Text with nothing to escape is given back as it is, without a copy.
func TestStringOfPlainTextAllocatesNothing(t *testing.T) {
	s := "a plain result, é 日本"
	if n := testing.AllocsPerRun(100, func() { _ = String(s) }); n != 0 {
		t.Fatalf("String of plain text: %v allocations", n)
	}
}
