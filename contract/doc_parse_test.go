package contract_test

import (
	"testing"

	"github.com/capdir/capdir/contract"
)

func TestParseDocSampleRows(t *testing.T) {
	tests := []struct {
		key  string
		want contract.Doc
		desc string
	}{
		{"NOW", contract.Doc{
			WhenToUse: "any object or model that needs the current date or time.",
			Args:      "none",
			Ex:        "[NOW][/NOW]",
			Output:    "{ now, today, time, zone, iso } — Pacific-offset ISO; today is the Pacific calendar date.",
			Summary:   "Return the current time from the build clock in Pacific time (America/Los_Angeles).",
			First:     "Return the current time from the build clock in Pacific time (America/Los_Angeles).",
		}, "Return the current time from the build clock in Pacific time (America/Los_Angeles)."},
		{"GROK_MODELS", contract.Doc{
			What:      "List every model on the xAI API. No args",
			WhenToUse: "you need to grok models",
			Args:      "see content",
			Ex:        "[GROK_MODELS][/GROK_MODELS]",
			Summary:   "List every model on the xAI API. No args.",
			First:     "WHAT: List every model on the xAI API. No args",
		}, "List every model on the xAI API. No args"},
		{"PROMPT_LAB_AGENT", contract.Doc{}, "You are a friendly peptide concierge (LAB TEST v1). One warm sentence,"},
		{"BLOOIO_FINISH", contract.Doc{
			Summary: "Phase C of the inbound turn: given the full agent output text in $1, extract the",
			First:   "Phase C of the inbound turn: given the full agent output text in $1, extract the",
		}, "Phase C of the inbound turn: given the full agent output text in $1, extract the"},
		{"DIR_PATCH", contract.Doc{
			Args:  "key | json_body",
			Ex:    `[DIR_PATCH]ROUTER|{"content":"new prompt text"}[/DIR_PATCH]`,
			First: "ARGS: key | json_body",
		}, "ARGS: key | json_body"},
		{"ZZ_TEST_TEMPERATURE", contract.Doc{
			What:      "Current temperature in Celsius for one latitude and longitude, from the Open-Meteo public API.",
			WhenToUse: "a capability needs the live temperature at a coordinate.",
			Args:      "$1=latitude | $2=longitude",
			Ex:        "[ZZ_TEST_TEMPERATURE]37.77|-122.42[/ZZ_TEST_TEMPERATURE]",
			Output:    "JSON with current.temperature_2m",
			First:     "WHAT: Current temperature in Celsius for one latitude and longitude, from the Open-Meteo public API.",
		}, "Current temperature in Celsius for one latitude and longitude, from the Open-Meteo public API."},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			r := sampleRow(t, tt.key)
			if got := contract.ParseDoc(r.Content); got != tt.want {
				t.Errorf("ParseDoc =\n %+v\nwant\n %+v", got, tt.want)
			}
			if got := contract.Description(&r); got != tt.desc {
				t.Errorf("Description = %q, want %q", got, tt.desc)
			}
		})
	}
}

func TestParseDocTolerance(t *testing.T) {
	tests := []struct {
		line string
		want contract.Doc
	}{
		{"#WHAT:x", contract.Doc{What: "x", First: "WHAT:x"}},
		{"  ##  what :  spaced out  ", contract.Doc{What: "spaced out", First: "what :  spaced out"}},
		{"# When To Use: later", contract.Doc{WhenToUse: "later", First: "When To Use: later"}},
		{"# when-to-use: later", contract.Doc{WhenToUse: "later", First: "when-to-use: later"}},
		{"# Args: a|b", contract.Doc{Args: "a|b", First: "Args: a|b"}},
		{"# ex : [K]1[/K]", contract.Doc{Ex: "[K]1[/K]", First: "ex : [K]1[/K]"}},
		{"# OUTPUT:\r", contract.Doc{}},
		{"# Example: not a tag", contract.Doc{Summary: "Example: not a tag", First: "Example: not a tag"}},
		{"not # a comment", contract.Doc{}},
		{"# WHAT: first\n# WHAT: second", contract.Doc{What: "first", First: "WHAT: first"}},
	}
	for _, tt := range tests {
		if got := contract.ParseDoc(tt.line); got != tt.want {
			t.Errorf("ParseDoc(%q) =\n %+v\nwant\n %+v", tt.line, got, tt.want)
		}
	}
}

func TestDescriptionFallbacks(t *testing.T) {
	tests := []struct {
		row  contract.Row
		want string
	}{
		{contract.Row{Type: "fn", Content: "# ARGS: a\n# Does x.\n# WHAT: y"}, "y"},
		{contract.Row{Type: "fn", Content: "# ARGS: a\n# Does x."}, "Does x."},
		{contract.Row{Type: "fn", Content: "# WHAT:\n# Does x."}, "Does x."},
		{contract.Row{Type: "fn", Content: "plain text"}, ""},
		{contract.Row{Type: "fn", Content: "# WHAT:\n#  EX :  \n[]"}, ""},
		{contract.Row{Type: "agent", Content: "# WHAT: routes\nYou route."}, "routes"},
		{contract.Row{Type: "agent", Content: "\n\n  You route.  \nMore."}, "You route."},
		{contract.Row{Type: "flow", Content: ""}, ""},
	}
	for _, tt := range tests {
		if got := contract.Description(&tt.row); got != tt.want {
			t.Errorf("Description(%s %q) = %q, want %q", tt.row.Type, tt.row.Content, got, tt.want)
		}
	}
}

func TestStripDocs(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"# only docs\n# more", ""},
		{"# ARGS: key | json_body\n# EX: x\n$2+", "$2+"},
		{"# doc\nLAST_REPLY_OF: $1\n  # indented comment\n> SEND_BY_CHANNEL: blooio|$2|$PREV\n",
			"LAST_REPLY_OF: $1\n> SEND_BY_CHANNEL: blooio|$2|$PREV"},
		{"  [\"$1\"]  \n", `["$1"]`},
		{"a # not a comment", "a # not a comment"},
		{"\t# tab comment\nbody", "body"},
	}
	for _, tt := range tests {
		if got := contract.StripDocs(tt.in); got != tt.want {
			t.Errorf("StripDocs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
