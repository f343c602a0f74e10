package contract_test

import (
	"fmt"

	"github.com/capdir/capdir/contract"
)

// A row's signature maps its pipe arguments onto its input_schema; the gate checks
// every call with it before any runner runs.
func ExampleCompileSignature() {
	row := contract.Row{
		Key:         "ZZ_TEST_TEMPERATURE",
		Type:        contract.TypeHTTP,
		Target:      "GET https://api.open-meteo.com/v1/forecast?latitude=$1&longitude=$2",
		Content:     "# WHAT: Current temperature.\n# ARGS: $1=latitude | $2=longitude",
		InputSchema: `{"type":"object","properties":{"latitude":{"type":"number"},"longitude":{"type":"number"}},"required":["latitude","longitude"]}`,
	}
	sig, err := contract.CompileSignature(&row)
	if err != nil {
		panic(err)
	}
	fmt.Println(sig.CheckPipe("37.77|-122.42"))
	fmt.Println(sig.CheckPipe("abc|-122.42"))
	fmt.Println(sig.CheckPipe("37.77"))
	fmt.Println(sig.PipeOf([]byte(`{"latitude":37.77,"longitude":-122.42}`)))
	// Output:
	// <nil>
	// latitude: must be number, got string "abc"
	// longitude: is required
	// 37.77|-122.42 <nil>
}
