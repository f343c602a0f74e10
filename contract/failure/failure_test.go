package failure_test

import (
	"errors"
	"testing"

	"github.com/capdir/capdir/contract/failure"
)

var errKind = errors.New("kind")

func TestEntryFillAndMatch(t *testing.T) {
	cases := []struct {
		literal string
		parts   []string
		want    string
	}{
		{"ERR:http:origin_changed:<want>!=<got>", []string{"https://a", "https://b"}, "ERR:http:origin_changed:https://a!=https://b"},
		{"risk_ceiling:<ceiling><row:<risk>", []string{"low", "high"}, "risk_ceiling:low<row:high"},
		{"ERR:flow:steps:<n>><max>", []string{"33", "32"}, "ERR:flow:steps:33>32"},
		{"ERR:http:<KEY>:ERR:auth:…", []string{"K", "unknown_prefix:x"}, "ERR:http:K:ERR:auth:unknown_prefix:x"},
		{"ERR:http:<KEY>:ERR:auth:…", []string{"K"}, "ERR:http:K:ERR:auth:…"},
		{"ERR:fn:content_not_array", nil, "ERR:fn:content_not_array"},
		{"ERR:x:<a>", []string{"<b>"}, "ERR:x:<b>"},
	}
	for _, c := range cases {
		e := failure.Entry{Literal: c.literal, Kind: errKind}
		if got := e.Fill(c.parts...); got != c.want {
			t.Errorf("Fill(%q, %q) = %q, want %q", c.literal, c.parts, got, c.want)
		}
		if err := e.New(c.parts...); err.Error() != c.want || !errors.Is(err, errKind) {
			t.Errorf("New(%q) = %v", c.literal, err)
		}
		if !e.Matches(c.want) {
			t.Errorf("%q does not match its own instance %q", c.literal, c.want)
		}
	}
	e := failure.Entry{Literal: "ERR:http:origin_changed:<want>!=<got>"}
	for _, no := range []string{"ERR:http:origin_changed:a=b", "xERR:http:origin_changed:a!=b", "ERR:http:origin_busy:a!=b"} {
		if e.Matches(no) {
			t.Errorf("%q matches %q", e.Literal, no)
		}
	}
	if !(failure.Entry{Literal: "ERR:a.b:<x>"}).Matches("ERR:a.b:") || (failure.Entry{Literal: "ERR:a.b:<x>"}).Matches("ERR:aXb:1") {
		t.Error("fixed text is matched literally, a part may be empty")
	}
}

func TestTableMatchTakesTheFirst(t *testing.T) {
	table := failure.Table{
		{Literal: "ERR:http:401:<body>", Doc: failure.DocCredential},
		{Literal: "ERR:http:<status>:<body>", Doc: failure.DocPlain | failure.DocCredential},
	}
	if e, ok := table.Match("ERR:http:401:no"); !ok || e.Literal != "ERR:http:401:<body>" {
		t.Errorf("Match = %v %v", e, ok)
	}
	if e, ok := table.Match("ERR:http:500:no"); !ok || e.Literal != "ERR:http:<status>:<body>" {
		t.Errorf("Match = %v %v", e, ok)
	}
	if _, ok := table.Match("ERR:fn:x"); ok {
		t.Error("ERR:fn:x matched an http entry")
	}
	if got := table.Listed(failure.DocPlain); len(got) != 1 || got[0].Literal != "ERR:http:<status>:<body>" {
		t.Errorf("Listed(DocPlain) = %v", got)
	}
}

func TestErrorMatchesKindAndCause(t *testing.T) {
	cause := errors.New("cause")
	err := error(failure.Wrap(errKind, cause, "ERR:x"))
	if err.Error() != "ERR:x" || !errors.Is(err, errKind) || !errors.Is(err, cause) {
		t.Errorf("%v does not match its kind and cause", err)
	}
	if lit, ok := failure.LiteralOf(errors.Join(errors.New("outer"), err)); !ok || lit != "ERR:x" {
		t.Errorf("LiteralOf = %q, %v", lit, ok)
	}
	if errors.Is(failure.New(nil, "ERR:y"), errKind) {
		t.Error("an error without a kind matches one")
	}
}
