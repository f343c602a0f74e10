package ask_test

import (
	"fmt"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/projector/ask"
)

func ExampleIndex_Search() {
	x := ask.New() // a node keeps it current with projector.Projector.WatchRows(x.Apply)
	x.Put(&contract.Row{Key: "ZZ_TEST_TEMPERATURE", Type: "http", Category: "tools", Enabled: 1,
		Content: "# WHAT: Current temperature in Celsius for one latitude and longitude, from the Open-Meteo public API.\n" +
			"# WHEN_TO_USE: a capability needs the live temperature at a coordinate."})
	x.Put(&contract.Row{Key: "NOW", Type: "fn", Category: "time", Enabled: 1,
		Content: "# Return the current time from the build clock in Pacific time (America/Los_Angeles)."})

	a, err := x.Search(ask.Query{Text: "current temperature at a coordinate"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range a.Results {
		fmt.Println(r.Key, r.Why)
	}
	_, err = x.Search(ask.Query{Text: "what is it"})
	fmt.Println(err)
	// Output:
	// ZZ_TEST_TEMPERATURE [key: temperature what: current, temperature when_to_use: temperature, coordinate]
	// NOW [what: current]
	// ask has no word to search for: "what is it" holds only common words such as "the" or "what": name what the capability does or works on, e.g. temperature, invoice, models
}
