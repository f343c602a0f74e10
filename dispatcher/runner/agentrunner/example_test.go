package agentrunner_test

import (
	"context"
	"fmt"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/agentrunner"
	"github.com/capdir/capdir/dispatcher/runner/agentrunner/agenttest"
)

// An agent row routed through a gateway prefix, with its credential from the
// guarded environment and a price for its model. The model here is a local fake.
func Example() {
	model := agenttest.Start(agenttest.Script(agenttest.Reply{
		Content: "Bonjour !",
		Usage:   agenttest.Usage{PromptTokens: 1200, CompletionTokens: 300},
	}))
	defer model.Close()

	providers, err := agentrunner.ParseProviders([]string{"gw:=" + model.URL + "/v1"})
	if err != nil {
		panic(err)
	}
	prices, err := agentrunner.ParsePrices([]string{"gw:openai/*=0.4/1.6"})
	if err != nil {
		panic(err)
	}
	secrets, _ := runner.ParseSecretEnv(runner.DefaultSecretEnv...)
	r, err := agentrunner.New(agentrunner.Config{
		Providers: providers,
		Prices:    prices,
		Env:       secrets.Guard(runner.MapEnv(map[string]string{"GW_API_KEY": "sk-example"})),
	})
	if err != nil {
		panic(err)
	}

	row := &contract.Row{
		Key: "TRANSLATE_FR", Type: contract.TypeAgent, Target: "gw:openai/gpt-4.1-mini",
		Auth:    "bearer:GW_API_KEY",
		Content: "# WHAT: translates a message into French\nTranslate the user's message into French.",
	}
	o := r.Run(context.Background(), runner.Call{Row: row, Body: "Hello!"})
	fmt.Println(o.Result, o.OK(), o.PromptTokens, o.CompletionTokens, o.CostUSD)

	sent := model.Requests()[0]
	fmt.Println(sent.Chat.Model, sent.Header.Get("Authorization") != "")
	fmt.Printf("%q\n", sent.System())
	// Output:
	// Bonjour ! true 1200 300 0.00096
	// openai/gpt-4.1-mini true
	// "Translate the user's message into French."
}
