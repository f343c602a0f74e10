package agentrunner

import (
	"errors"
	"strings"
	"testing"
)

func TestParseProvidersRoute(t *testing.T) {
	ps, err := ParseProviders([]string{
		"gw:=https://gw.example/v1/, gpt-=https://api.openai.example/v1",
		"",
		" gpt-4.1-mini=http://mini.example ,gw:openai/=https://gw.example/openai",
		"*=https://default.example",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ model, base, sent string }{
		{"gw:openai/gpt-4.1-mini", "https://gw.example/openai", "gw:openai/gpt-4.1-mini"}, // longer, no ':' at its end: kept
		{"gw:anthropic/claude", "https://gw.example/v1", "anthropic/claude"},              // routing prefix removed
		{"gpt-4.1-mini-2025", "http://mini.example", "gpt-4.1-mini-2025"},                 // longest prefix wins
		{"gpt-4.1", "https://api.openai.example/v1", "gpt-4.1"},
		{"grok-4.3", "https://default.example", "grok-4.3"}, // * last
		{"GW:x", "https://default.example", "GW:x"},         // case-sensitive
	} {
		base, sent, ok := ps.Route(tc.model)
		if !ok || base != tc.base || sent != tc.sent {
			t.Errorf("Route(%q) = %q, %q, %v; want %q, %q", tc.model, base, sent, ok, tc.base, tc.sent)
		}
	}
	want := "gpt-4.1-mini=http://mini.example,gw:openai/=https://gw.example/openai,gpt-=https://api.openai.example/v1,gw:=https://gw.example/v1,*=https://default.example"
	if got := ps.String(); got != want {
		t.Errorf("String() = %s\nwant       %s", got, want)
	}
	again, err := ParseProviders([]string{ps.String()})
	if err != nil || again.String() != want {
		t.Errorf("String does not parse back: %v %s", err, again)
	}

	var none Providers
	if _, _, ok := none.Route("gpt-4.1"); ok {
		t.Error("the empty table routed a model")
	}
	ps, _ = ParseProviders([]string{"gw:=https://gw.example"})
	if _, _, ok := ps.Route("grok"); ok {
		t.Error("a model no prefix matches was routed")
	}
}

func TestParseProvidersErrors(t *testing.T) {
	for entry, want := range map[string]string{
		"gw:":                                         "want PREFIX=BASE_URL",
		"=https://x.example":                          "want PREFIX=BASE_URL",
		"gw:=":                                        "want PREFIX=BASE_URL",
		"g w=https://x.example":                       "must not contain spaces",
		"gpt*=https://x.example":                      "without wildcards",
		"gw:=ftp://x.example":                         "http:// or https://",
		"gw:=x.example/v1":                            "http:// or https://",
		"gw:=https:///v1":                             "no host",
		"gw:=https://user:pw@x.example":               "user info",
		"gw:=https://x.example/v1?key=abc":            "query or fragment",
		"gw:=https://x.example/v1#frag":               "query or fragment",
		"gw:=https://x.example/%zz":                   "does not parse",
		"gw:=https://a.example,gw:=https://b.example": "given twice",
	} {
		_, err := ParseProviders([]string{entry})
		if !errors.Is(err, ErrBadProvider) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseProviders(%q) = %v; want ErrBadProvider saying %q", entry, err, want)
		}
	}
}

func TestParsePrices(t *testing.T) {
	ps, err := ParsePrices([]string{"gpt-4.1=2/8, gpt-4.1-mini=0.4/1.6", "gw:openai/*=1/2,gw:*=3/4", "*=10/10"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		model   string
		in, out float64
	}{
		{"gpt-4.1", 2, 8},
		{"gpt-4.1-mini", 0.4, 1.6},
		{"gpt-4.1-nano", 10, 10}, // an exact entry is not a prefix
		{"gw:openai/gpt-4.1", 1, 2},
		{"gw:anthropic/claude", 3, 4},
		{"grok", 10, 10},
	} {
		p, ok := ps.Lookup(tc.model)
		if !ok || p.In != tc.in || p.Out != tc.out {
			t.Errorf("Lookup(%q) = %+v, %v; want %v/%v", tc.model, p, ok, tc.in, tc.out)
		}
	}
	if got := ps.Cost("gpt-4.1", 1_000_000, 500_000); got != 6 {
		t.Errorf("Cost = %v, want 6", got)
	}
	var none Prices
	if got := none.Cost("gpt-4.1", 1000, 1000); got != 0 {
		t.Errorf("unpriced Cost = %v, want 0", got)
	}
	for entry, want := range map[string]string{
		"gpt":             "want MODEL=IN/OUT",
		"gpt=1":           "want MODEL=IN/OUT",
		"=1/2":            "want MODEL=IN/OUT",
		"gpt=x/2":         "input price",
		"gpt=1/-2":        "output price",
		"gpt=NaN/1":       "input price",
		"gpt=1/Inf":       "output price",
		"g*pt=1/2":        "'*' only at its end",
		"a b=1/2":         "no spaces",
		"gpt=1/2,gpt=3/4": "given twice",
	} {
		_, err := ParsePrices([]string{entry})
		if !errors.Is(err, ErrBadPrice) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePrices(%q) = %v; want ErrBadPrice saying %q", entry, err, want)
		}
	}
}
