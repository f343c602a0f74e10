package agentrunner

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Price is what one model costs, in USD per million tokens.
type Price struct {
	// Model is a model id as agent rows name it (the routing prefix included), a
	// prefix ending in '*' ("gw:openai/*"), or * for every model.
	Model string
	In    float64 // USD per million prompt (input) tokens
	Out   float64 // USD per million completion (output) tokens
}

// Prices is the price table. The zero value prices nothing (every call costs 0).
// It is immutable and safe for concurrent use.
type Prices struct {
	exact    map[string]Price
	prefixes []Price // longest prefix first; * last
}

// ParsePrices builds the price table. Each argument may hold several entries
// separated by commas; blanks are skipped. An entry is MODEL=IN/OUT: MODEL is a
// model id as agent rows name it ("gw:openai/gpt-4.1-mini"), a prefix ending in
// '*' ("gw:openai/*"), or * for every model; IN and OUT are non-negative decimal
// numbers of USD per million input and output tokens ("gpt-4.1=2/8"). A model id
// matches its exact entry first, else the longest matching prefix, else *. A MODEL
// given twice is an error. Errors wrap ErrBadPrice and name the entry.
func ParsePrices(args []string) (Prices, error) {
	ps := Prices{exact: map[string]Price{}}
	seen := map[string]bool{}
	for _, arg := range args {
		for _, entry := range strings.Split(arg, ",") {
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue
			}
			p, err := parsePrice(entry)
			if err != nil {
				return Prices{}, err
			}
			if seen[p.Model] {
				return Prices{}, fmt.Errorf("%w: %q: the model %q is given twice", ErrBadPrice, entry, p.Model)
			}
			seen[p.Model] = true
			if strings.HasSuffix(p.Model, "*") {
				ps.prefixes = append(ps.prefixes, p)
			} else {
				ps.exact[p.Model] = p
			}
		}
	}
	sort.SliceStable(ps.prefixes, func(i, j int) bool { return len(ps.prefixes[i].Model) > len(ps.prefixes[j].Model) })
	return ps, nil
}

func parsePrice(entry string) (Price, error) {
	const want = "want MODEL=IN/OUT in USD per million input/output tokens, e.g. gpt-4.1=2/8 or gw:openai/*=0.4/1.6"
	model, rates, ok := strings.Cut(entry, "=")
	model, rates = strings.TrimSpace(model), strings.TrimSpace(rates)
	in, out, ok2 := strings.Cut(rates, "/")
	if !ok || !ok2 || model == "" {
		return Price{}, fmt.Errorf("%w: %q: %s", ErrBadPrice, entry, want)
	}
	if strings.ContainsAny(model, " \t\r\n") || strings.Contains(strings.TrimSuffix(model, "*"), "*") {
		return Price{}, fmt.Errorf("%w: %q: the model must have no spaces, and '*' only at its end", ErrBadPrice, entry)
	}
	p := Price{Model: model}
	var err error
	if p.In, err = parseRate(in); err != nil {
		return Price{}, fmt.Errorf("%w: %q: input price: %v; %s", ErrBadPrice, entry, err, want)
	}
	if p.Out, err = parseRate(out); err != nil {
		return Price{}, fmt.Errorf("%w: %q: output price: %v; %s", ErrBadPrice, entry, err, want)
	}
	return p, nil
}

func parseRate(s string) (float64, error) {
	s = strings.TrimSpace(s)
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q is not a number", s)
	case math.IsNaN(v) || math.IsInf(v, 0) || v < 0:
		return 0, fmt.Errorf("%q is not a non-negative finite number", s)
	}
	return v, nil
}

// Lookup returns the price of model: its exact entry, else the longest prefix
// entry matching it, else *; ok is false when none applies.
func (ps Prices) Lookup(model string) (Price, bool) {
	if p, ok := ps.exact[model]; ok {
		return p, true
	}
	for _, p := range ps.prefixes {
		if strings.HasPrefix(model, strings.TrimSuffix(p.Model, "*")) {
			return p, true
		}
	}
	return Price{}, false
}

// Cost is the USD cost of a call to model that used the given tokens; 0 when the
// model has no price.
func (ps Prices) Cost(model string, promptTokens, completionTokens int64) float64 {
	p, ok := ps.Lookup(model)
	if !ok {
		return 0
	}
	return (float64(promptTokens)*p.In + float64(completionTokens)*p.Out) / 1e6
}
