package openapi_test

import (
	"context"
	"fmt"

	"github.com/capdir/capdir/api/importer/openapi"
)

func ExampleConvert() {
	spec := `
openapi: 3.0.3
info: {title: Weather, version: "1"}
servers: [{url: https://api.weather.example/v1}]
security: [{key: []}]
paths:
  /cities/{city}/now:
    get:
      operationId: currentWeather
      summary: The weather in a city now
      tags: [weather]
      parameters:
        - {name: city, in: path, required: true, schema: {type: string}, example: Paris}
        - {name: units, in: query, schema: {type: string, enum: [metric, imperial]}}
      responses:
        "200": {description: the weather, content: {application/json: {}}}
components:
  securitySchemes:
    key: {type: apiKey, in: query, name: appid}
`
	s, err := openapi.Convert(context.Background(), []byte(spec), openapi.Options{AuthEnv: map[string]string{"": "WEATHER_API_KEY"}})
	if err != nil {
		panic(err)
	}
	row := s.Items[0].Row
	fmt.Println(row.Key)
	fmt.Println(row.Target)
	fmt.Println(row.Auth)
	fmt.Println(row.Content)
	fmt.Println(row.InputSchema)
	fmt.Println(row.Examples)
	// Output:
	// CURRENT_WEATHER
	// GET https://api.weather.example/v1/cities/$1/now?units=$2
	// query:appid=WEATHER_API_KEY
	// # WHAT: The weather in a city now
	// # ARGS: $1=city | $2=units
	// # OUTPUT: the weather (200, application/json)
	// # SOURCE: openapi spec="Weather" prefix="" op=GET /cities/{city}/now
	// {"type":"object","properties":{"city":{"type":"string"},"units":{"enum":["metric","imperial"],"type":"string"}},"required":["city"]}
	// ["Paris"]
}
