package ask_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/projector/ask"
)

func index(rows ...[]contract.Row) *ask.Index {
	x := ask.New()
	for _, rs := range rows {
		for i := range rs {
			x.Put(&rs[i])
		}
	}
	return x
}

func search(t *testing.T, x *ask.Index, q ask.Query) ask.Answer {
	t.Helper()
	a, err := x.Search(q)
	if err != nil {
		t.Fatalf("Search(%q): %v", q.Text, err)
	}
	return a
}

func keys(a ask.Answer) []string {
	var ks []string
	for _, r := range a.Results {
		ks = append(ks, r.Key)
	}
	return ks
}

// nearMisses are rows that each share words with the temperature ask, written to
// compete with it.
func nearMisses() []contract.Row {
	row := func(key, cat, content string) contract.Row {
		return contract.Row{Key: key, Type: "http", Category: cat, Content: content, Enabled: 1, PlannerRank: 100}
	}
	return []contract.Row{
		row("OVEN_TEMPERATURE_SET", "kitchen", "# WHAT: Set the oven temperature, in Celsius.\n# WHEN_TO_USE: a recipe needs the oven at a temperature.\n# ARGS: $1=temperature"),
		row("CIRCUIT_CURRENT_READ", "electrical", "# WHAT: Current drawn by a circuit, in amperes.\n# WHEN_TO_USE: a capability needs the live current of a circuit.\n# OUTPUT: the current in A"),
		row("MEETING_COORDINATE", "calendar", "# WHAT: Coordinate a meeting between attendees.\n# WHEN_TO_USE: people need a common time."),
		row("GEOCODE_ADDRESS", "maps", "# WHAT: Coordinates (latitude and longitude) of a street address.\n# WHEN_TO_USE: a capability needs the coordinate of a place.\n# OUTPUT: JSON with lat and lon"),
		row("WEATHER_FORECAST_CITY", "weather", "# WHAT: Temperature forecast for the next seven days in a city.\n# WHEN_TO_USE: a capability needs tomorrow's temperature in a city.\n# ARGS: $1=city"),
		row("CPU_TEMPERATURE", "ops", "# WHAT: Current CPU temperature of a server.\n# WHEN_TO_USE: an operator checks a server's current temperature."),
	}
}

func TestAskPhrasings(t *testing.T) {
	sample := index(sampleRows(t))
	crowded := index(genRows(1, 300), nearMisses(), sampleRows(t))
	for _, c := range []struct {
		ask, want string
		crowded   bool // also first among the generated rows and the near misses
	}{
		{"current temperature at a coordinate", "ZZ_TEST_TEMPERATURE", true},
		{"temperature in celsius for a latitude and longitude", "ZZ_TEST_TEMPERATURE", true},
		{"what time is it", "NOW", false},
		{"today's date", "NOW", false},
		{"list the models on xAI", "GROK_MODELS", true},
		{"send the last reply to a phone", "BLOOIO_FINISH", true},
		{"peptide concierge", "PROMPT_LAB_AGENT", true},
		{"patch a directory row", "DIR_PATCH", true},
	} {
		idx := map[bool]*ask.Index{false: sample, true: crowded}
		for _, crowd := range []bool{false, true} {
			if crowd && !c.crowded {
				continue
			}
			a := search(t, idx[crowd], ask.Query{Text: c.ask, Limit: 5})
			if len(a.Results) == 0 || a.Results[0].Key != c.want {
				t.Errorf("ask %q (crowded %v) = %v, want %s first", c.ask, crowd, keys(a), c.want)
			}
		}
	}
	if n := crowded.Len(); n != 312 {
		t.Fatalf("crowded index holds %d rows, want 312", n)
	}
}

func TestAskResultSaysWhy(t *testing.T) {
	a := search(t, index(sampleRows(t)), ask.Query{Text: "Current temperatures at a coordinate"})
	// NOW holds "current" too.
	if a.Ask != "Current temperatures at a coordinate" || a.Total != 2 || len(a.Results) != 2 || a.Results[1].Key != "NOW" {
		t.Fatalf("answer = %+v, want the ask echoed, then ZZ_TEST_TEMPERATURE and NOW", a)
	}
	r := a.Results[0]
	want := ask.Result{
		Key: "ZZ_TEST_TEMPERATURE", Type: "http", Category: "tools",
		What:  "Current temperature in Celsius for one latitude and longitude, from the Open-Meteo public API.",
		Score: r.Score,
		// The ask's words as written (lower-cased), "temperatures" meeting "temperature".
		Why: []string{"key: temperatures", "what: current, temperatures", "when_to_use: temperatures, coordinate", "output: current, temperatures"},
	}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("result = %+v\nwant %+v", r, want)
	}
	if r.Score <= 0 {
		t.Fatalf("score = %v, want > 0", r.Score)
	}
}

func TestAskDeletedRowDisappears(t *testing.T) {
	x := index(sampleRows(t))
	x.Delete("ZZ_TEST_TEMPERATURE")
	a := search(t, x, ask.Query{Text: "temperature at a coordinate"})
	if len(a.Results) != 0 || a.Total != 0 {
		t.Fatalf("after delete: %v (total %d), want nothing", keys(a), a.Total)
	}
	x.Apply("NOW", nil) // the projector's form of a delete
	if a := search(t, x, ask.Query{Text: "what time is it"}); len(a.Results) != 0 {
		t.Fatalf("after Apply(nil): %v, want nothing", keys(a))
	}
	if x.Len() != 4 {
		t.Fatalf("Len = %d, want 4", x.Len())
	}
}

func TestAskDisabledRowNeverAppears(t *testing.T) {
	rows := sampleRows(t)
	zz := rows[5]
	zz.Enabled = 0
	x := index(rows[:5])
	x.Put(&zz)
	const q = "temperature at a coordinate"
	if a := search(t, x, ask.Query{Text: q}); len(a.Results) != 0 {
		t.Fatalf("a disabled row was found: %v", keys(a))
	}
	zz.Enabled = 1
	x.Apply(zz.Key, &zz)
	if a := search(t, x, ask.Query{Text: q}); len(a.Results) != 1 {
		t.Fatalf("enabled again: %v, want the row", keys(a))
	}
	zz.Enabled = 0
	x.Apply(zz.Key, &zz) // a PATCH {"enabled":0}
	if a := search(t, x, ask.Query{Text: q}); len(a.Results) != 0 {
		t.Fatalf("disabled by a change: %v, want nothing", keys(a))
	}
	if a := search(t, x, ask.Query{Text: q, Visible: func(string, string) bool { return true }}); len(a.Results) != 0 {
		t.Fatalf("disabled, with a filter that admits everything: %v, want nothing", keys(a))
	}
}

func TestAskUpdatedDocstringChangesRanking(t *testing.T) {
	a := contract.Row{Key: "INVOICE_TOTAL", Type: "fn", Enabled: 1, Content: "# WHAT: Total of an invoice, with tax."}
	b := contract.Row{Key: "LEDGER_SUM", Type: "fn", Enabled: 1, Content: "# WHAT: Sum of a ledger page."}
	x := index([]contract.Row{a, b})
	const q = "ledger invoice total"
	if got := keys(search(t, x, ask.Query{Text: q})); !slices.Equal(got, []string{"INVOICE_TOTAL", "LEDGER_SUM"}) {
		t.Fatalf("before: %v", got)
	}
	b.Content = "# WHAT: Invoice total from the ledger.\n# WHEN_TO_USE: you need an invoice total as booked."
	x.Put(&b)
	if got := keys(search(t, x, ask.Query{Text: q})); !slices.Equal(got, []string{"LEDGER_SUM", "INVOICE_TOTAL"}) {
		t.Fatalf("after the update: %v, want LEDGER_SUM first", got)
	}
	if got := search(t, x, ask.Query{Text: "page"}); len(got.Results) != 0 {
		t.Fatalf("a word the old docstring had still matches: %v", keys(got))
	}
}

func TestAskTiesGoToPlannerRankThenKey(t *testing.T) {
	row := func(key string, rank int) contract.Row {
		return contract.Row{Key: key, Type: "fn", Enabled: 1, PlannerRank: rank, Category: "same", Content: "# WHAT: Convert a currency amount."}
	}
	x := index([]contract.Row{row("B", 100), row("A", 100), row("C", 50), row("D", 200)})
	if got := keys(search(t, x, ask.Query{Text: "convert currency"})); !slices.Equal(got, []string{"C", "A", "B", "D"}) {
		t.Fatalf("order = %v, want C (rank 50), A, B (rank 100, by key), D (rank 200)", got)
	}
}

func TestAskSeesOnlyVisibleRows(t *testing.T) {
	rows := sampleRows(t)
	x := index(rows)
	scope := func(key, category string) bool { return key == "GROK_MODELS" || category == "tools" }
	a := search(t, x, ask.Query{Text: "current temperature models", Visible: scope})
	if got := keys(a); !slices.Equal(got, []string{"ZZ_TEST_TEMPERATURE", "GROK_MODELS"}) && !slices.Equal(got, []string{"GROK_MODELS", "ZZ_TEST_TEMPERATURE"}) {
		t.Fatalf("scoped = %v, want only the two rows in scope", got)
	}
	if a.Total != 2 {
		t.Fatalf("total = %d, want 2", a.Total)
	}
	if a := search(t, x, ask.Query{Text: "what time is it", Visible: scope}); len(a.Results) != 0 || a.Total != 0 {
		t.Fatalf("a row outside the scope was found: %v (total %d)", keys(a), a.Total)
	}

	// Rows outside the scope do not move a visible row's score: the statistics are
	// the scope's.
	hidden := genRows(2, 200)
	for i := range hidden {
		hidden[i].Content += "\n# current temperature models"
	}
	y := index(rows, hidden)
	b := search(t, y, ask.Query{Text: "current temperature models", Visible: scope})
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("hidden rows changed the answer:\n%+v\n%+v", a, b)
	}
}

func TestAskRefusesBadAsks(t *testing.T) {
	x := index(sampleRows(t))
	many := make([]string, ask.MaxAskTerms+1)
	for i := range many {
		many[i] = fmt.Sprintf("word%d", i)
	}
	for _, c := range []struct {
		q    ask.Query
		err  error
		says string
	}{
		{ask.Query{Text: ""}, ask.ErrEmpty, "plain words"},
		{ask.Query{Text: " \t\n"}, ask.ErrEmpty, "plain words"},
		{ask.Query{Text: "what is it?"}, ask.ErrNoWords, `"what is it?"`},
		{ask.Query{Text: "a b c ! _"}, ask.ErrNoWords, "name what the capability does"},
		{ask.Query{Text: strings.Repeat("x", ask.MaxAskBytes+1)}, ask.ErrTooLong, "at most 512"},
		{ask.Query{Text: strings.Join(many, " ")}, ask.ErrTooManyWords, "21 distinct words, at most 20"},
		{ask.Query{Text: "time", Limit: -1}, ask.ErrBadLimit, "at least 1"},
	} {
		a, err := x.Search(c.q)
		if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("Search(%.40q, limit %d) = %v, want %v saying %q", c.q.Text, c.q.Limit, err, c.err, c.says)
		}
		if a.Results != nil {
			t.Errorf("Search(%.40q) answered results with its error", c.q.Text)
		}
	}
	// Repeats and inflections of one word count once.
	if _, err := x.Search(ask.Query{Text: strings.Repeat("model models modeling ", 20)}); err != nil {
		t.Fatalf("one word repeated: %v", err)
	}
}

func TestAskLimit(t *testing.T) {
	x := index(genRows(3, 200))
	for _, c := range []struct{ limit, want int }{{0, ask.DefaultLimit}, {3, 3}, {ask.MaxLimit, ask.MaxLimit}, {1000, ask.MaxLimit}} {
		a := search(t, x, ask.Query{Text: "from the api", Limit: c.limit}) // every generated row
		if len(a.Results) != c.want || a.Total <= c.want {
			t.Errorf("limit %d: %d results of %d, want %d", c.limit, len(a.Results), a.Total, c.want)
		}
	}
	if a := search(t, ask.New(), ask.Query{Text: "anything"}); a.Results == nil || len(a.Results) != 0 || a.Total != 0 {
		t.Fatalf("empty index: %+v, want an empty list", a)
	}
}

// churn applies random creates, replacements, disables and deletes to x, and
// returns the rows that should be live.
func churn(x *ask.Index, rng *rand.Rand, pool []contract.Row, ops int, live map[string]contract.Row) {
	for range ops {
		r := pool[rng.IntN(len(pool))]
		r.Key = fmt.Sprintf("K%04d", rng.IntN(3000))
		switch rng.IntN(10) {
		case 0, 1:
			x.Delete(r.Key)
			delete(live, r.Key)
		case 2:
			r.Enabled = 0
			x.Apply(r.Key, &r)
			delete(live, r.Key)
		default:
			x.Apply(r.Key, &r)
			live[r.Key] = r
		}
	}
}

func TestAskCompactionKeepsAnswers(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	pool := genRows(4, 500)
	x := ask.New()
	live := map[string]contract.Row{}
	compactions := 0
	for range 20 {
		dead := ask.DeadDocs(x)
		churn(x, rng, pool, 1000, live)
		if ask.DeadDocs(x) < dead {
			compactions++
		}
	}
	if compactions == 0 {
		t.Fatal("the churn never compacted the index: the test does not test it")
	}
	var rows []contract.Row
	for _, r := range live {
		rows = append(rows, r)
	}
	fresh := index(rows)
	if x.Len() != fresh.Len() {
		t.Fatalf("Len = %d, want %d", x.Len(), fresh.Len())
	}
	for _, q := range []string{"current temperature", "list models", "weather forecast city", "send message", "acme api"} {
		got, want := search(t, x, ask.Query{Text: q, Limit: ask.MaxLimit}), search(t, fresh, ask.Query{Text: q, Limit: ask.MaxLimit})
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ask %q after churn:\n%v\nwant (a fresh index)\n%v", q, keys(got), keys(want))
		}
	}
}

func TestAskConcurrentUse(t *testing.T) {
	pool := genRows(6, 300)
	x := index(pool[:100])
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			churn(x, rng, pool, 3000, map[string]contract.Row{})
		})
	}
	for range 4 {
		wg.Go(func() {
			for i := range 300 {
				q := ask.Query{Text: "current temperature list models"}
				if i%2 == 0 {
					q.Visible = func(key, _ string) bool { return key < "K1500" }
				}
				a, err := x.Search(q)
				if err != nil {
					t.Error(err)
					return
				}
				for j := 1; j < len(a.Results); j++ {
					if a.Results[j].Score > a.Results[j-1].Score {
						t.Errorf("results out of order: %v", a.Results)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}
