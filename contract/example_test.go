package contract_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/capdir/capdir/contract"
)

func ExampleDecodeFields() {
	f, err := contract.DecodeFields([]byte(`{"key":"NOW","type":"fn","enabled":true,"seq":null,"row_num":3}`))
	fmt.Println(f.Names(), f.Values.Enabled, err)

	_, err = contract.DecodeFields([]byte(`{"enabled":"yes","planner_rank":"x"}`))
	fmt.Println(err)
	// Output:
	// [key type seq enabled row_num] 1 <nil>
	// enabled: must be 0 or 1 (a JSON number, or true/false), got string "yes"
	// planner_rank: must be an integer (a JSON number such as 100), got string "x"
}

func ExampleCreate() {
	f, _ := contract.DecodeFields([]byte(`{
		"key": "ZZ_TEST_TEMPERATURE",
		"type": "http",
		"target": "GET https://api.open-meteo.com/v1/forecast?latitude=$1&longitude=$2&current=temperature_2m",
		"content": "# WHAT: Current temperature in Celsius for one latitude and longitude.",
		"category": "tools"
	}`))
	now := time.Date(2026, 7, 26, 4, 36, 19, 832_000_000, time.UTC)
	r, err := contract.Create(f, now)
	fmt.Println(r.Key, r.Enabled, r.PlannerVisible, r.PlannerRank, r.Sensitive, r.UpdatedAt, err)
	// Output:
	// ZZ_TEST_TEMPERATURE 1 1 100 0 2026-07-26T04:36:19.832Z <nil>
}

func ExampleReplace() {
	now := time.Date(2026, 7, 26, 4, 36, 19, 832_000_000, time.UTC)
	f, _ := contract.DecodeFields([]byte(`{"key":"NOW","type":"fn","target":"now"}`))
	_, err := contract.Replace("NOW", nil, f, now)
	fmt.Println(err)
	// Output:
	// registry_hygiene_refused: missing_description
}

func ExamplePatch() {
	old := contract.Row{Key: "ZZ_TEST_TEMPERATURE", Type: "http", Content: "# WHAT: temperature",
		Enabled: 1, PlannerVisible: 1, PlannerRank: 100}
	now := time.Date(2026, 7, 26, 5, 0, 0, 0, time.UTC)

	_, _, err := contract.Patch(old, mustDecodeExample(`{"runner":"edge"}`), now)
	fmt.Println(err, errors.Is(err, contract.ErrNoRecognizedFields))

	r, ignored, err := contract.Patch(old, mustDecodeExample(`{"planner_rank":5,"sensitive":1}`), now)
	fmt.Println(r.PlannerRank, r.Sensitive, ignored, err)

	_, _, err = contract.Patch(old, mustDecodeExample(`{"content":""}`), now)
	fmt.Println(err)
	// Output:
	// no recognized fields true
	// 5 0 [sensitive] <nil>
	// registry_hygiene_refused: missing_description
}

func mustDecodeExample(body string) contract.Fields {
	f, err := contract.DecodeFields([]byte(body))
	if err != nil {
		panic(err)
	}
	return f
}

func ExampleHygiene() {
	r := contract.Row{Key: "PAY", Type: "http", Content: "# WHAT: Send money.", Sensitive: 1}
	if v := contract.Hygiene(&r); v != nil {
		fmt.Println(v)
		fmt.Println(string(v.Body()))
	}
	// Output:
	// registry_hygiene_refused: high_risk_missing_schema
	// {"error":"registry_hygiene_refused: high_risk_missing_schema","how_to_fix":"input_schema is required when sensitive is 1: send input_schema, a JSON Schema (as a string) describing the arguments, in the same call that sets sensitive, or set sensitive to 0","state_changed":false}
}

func ExampleValidate() {
	r := contract.Row{Key: "weather.now", Type: "rest", Enabled: 1, PlannerVisible: 1}
	err := contract.Validate(&r)
	var ve *contract.ValidationError
	fmt.Println(errors.As(err, &ve), ve.Field)
	fmt.Println(err)
	// Output:
	// true key
	// key: must be 1 to 128 characters from A-Z, a-z, 0-9, '_' and '-' (no dots, spaces, '*' or '>'); got "weather.now" (11 bytes)
	// type: must be one of fn, http, agent, flow; got "rest"
}

func ExampleParseDoc() {
	d := contract.ParseDoc("# WHAT: List every model on the xAI API. No args\n" +
		"# WHEN_TO_USE: you need to grok models\n# ARGS: see content\n# EX: [GROK_MODELS][/GROK_MODELS]")
	fmt.Println(d.Description())
	fmt.Println(d.Ex)
	// Output:
	// List every model on the xAI API. No args
	// [GROK_MODELS][/GROK_MODELS]
}

func ExampleStripDocs() {
	fmt.Printf("%q\n", contract.StripDocs("# ARGS: key | json_body\n# EX: [DIR_PATCH]ROUTER|{}[/DIR_PATCH]\n$2+"))
	// Output:
	// "$2+"
}

func ExampleFingerprint() {
	r := contract.Row{Key: "GROK_MODELS", Type: "http", Target: "GET https://api.x.ai/v1/models",
		Auth: "bearer:GROK_API_KEY", Content: "# WHAT: List every model on the xAI API. No args", Enabled: 1}
	before := contract.Fingerprint(&r)
	r.Examples = `["unused"]`
	afterExamples := contract.Fingerprint(&r)
	r.Target = "GET https://api.x.ai/v1/language-models"
	afterTarget := contract.Fingerprint(&r)
	fmt.Println(before == afterExamples, afterExamples == afterTarget)
	// Output:
	// true false
}

func ExampleNumber() {
	one := int64(1)
	rows := []contract.Row{{Key: "NOW"}, {Key: "ROUTER", Seq: &one}, {Key: "DIR_PATCH"}}
	contract.Number(rows)
	for _, r := range rows {
		fmt.Println(r.RowNum, r.Key)
	}
	// Output:
	// 1 ROUTER
	// 2 DIR_PATCH
	// 3 NOW
}
