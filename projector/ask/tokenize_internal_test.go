package ask

import (
	"slices"
	"strings"
	"testing"
)

func TestStem(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		// plurals
		{"models", "model"}, {"entries", "entry"}, {"matches", "match"}, {"boxes", "box"},
		{"status", "status"}, {"address", "address"}, {"analysis", "analysis"}, {"celsius", "celsius"},
		// -ing and -ed, with undoubling and a final -e
		{"listing", "list"}, {"listed", "list"}, {"running", "run"}, {"stopped", "stop"},
		{"called", "call"}, {"passed", "pass"}, {"string", "string"}, {"thing", "thing"}, {"need", "need"},
		{"create", "creat"}, {"creates", "creat"}, {"created", "creat"}, {"creating", "creat"},
		{"temperature", "temperatur"}, {"temperatures", "temperatur"}, {"coordinates", "coordinat"},
		{"time", "tim"}, {"times", "tim"}, {"free", "free"},
		// left alone: short, digits, other scripts
		{"api", "api"}, {"uses", "use"}, {"2m", "2m"}, {"v1s", "v1s"}, {"größen", "größen"},
	} {
		if got := string(stem([]byte(c.in))); got != c.want {
			t.Errorf("stem(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTokens(t *testing.T) {
	for _, c := range []struct {
		in          string
		words, stem []string
	}{
		{"ZZ_TEST_TEMPERATURE", []string{"zz", "test", "temperature"}, []string{"zz", "test", "temperatur"}},
		{"What time is it?", []string{"time"}, []string{"tim"}},
		{"JSON with current.temperature_2m", []string{"json", "current", "temperature", "2m"}, []string{"json", "current", "temperatur", "2m"}},
		{"$1=latitude | $2=longitude", []string{"latitude", "longitude"}, []string{"latitud", "longitud"}},
		{"Ärzte-Liste für Köln", []string{"ärzte", "liste", "für", "köln"}, []string{"ärzte", "list", "für", "köln"}},
		{"a " + strings.Repeat("k", maxTokenBytes+1) + " ok", []string{"ok"}, []string{"ok"}}, // too long: skipped
		{"\xff\xfebad utf8\x00", []string{"bad", "utf8"}, []string{"bad", "utf8"}},
	} {
		var words, stems []string
		var tk tokenizer
		tk.each(c.in, func(w, s []byte) { words, stems = append(words, string(w)), append(stems, string(s)) })
		if !slices.Equal(words, c.words) || !slices.Equal(stems, c.stem) {
			t.Errorf("tokens(%q) = %q / %q, want %q / %q", c.in, words, stems, c.words, c.stem)
		}
	}
}
