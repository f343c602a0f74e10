package contract_test

import (
	"fmt"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner/httprunner"
)

func ExampleNewDocument() {
	r := contract.Row{
		Key: "ZZ_TEST_TEMPERATURE", Type: "http", Category: "tools", Enabled: 1,
		Target:   "GET https://api.open-meteo.com/v1/forecast?latitude=$1&longitude=$2&current=temperature_2m",
		Content:  "# WHAT: Current temperature in Celsius for one latitude and longitude.\n# ARGS: $1=latitude | $2=longitude",
		Examples: `["37.77|-122.42"]`,
	}
	d := contract.NewDocument(&r, contract.DocContext{
		BaseURL: "https://capdir.example", Viewer: contract.Owner(),
		Failures: httprunner.Failures, // the failure table of the row's runner
	})
	fmt.Println(d.Path)
	fmt.Println(d.RunNow)
	fmt.Println(d.ExampleCall)
	fmt.Println(d.Inputs.Args, "·", d.Risk.Level, "·", d.Affordances.Can)
	fmt.Println(len(d.Troubleshooting), d.Troubleshooting[1].Symptom)
	// Output:
	// [capdir tools ZZ_TEST_TEMPERATURE]
	// https://capdir.example/api/dispatch?key=ZZ_TEST_TEMPERATURE&body=37.77%7C-122.42
	// [ZZ_TEST_TEMPERATURE]37.77|-122.42[/ZZ_TEST_TEMPERATURE]
	// $1=latitude | $2=longitude · low · [read invoke edit delete mint_tokens]
	// 4 ERR:http:fetch:<message>
}
