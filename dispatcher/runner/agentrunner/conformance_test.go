package agentrunner

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/agentrunner/agenttest"
	"github.com/capdir/capdir/dispatcher/runner/runnertest"
)

// conformanceModel is the fake model of the conformance rows, by model id: echo
// answers with the user message, block never answers, big with N bytes 'x' (N the
// user message), seen with everything the request carried, loop always calls a
// tool, 500 fails, badjson answers a broken document.
func conformanceModel(req agenttest.Request) agenttest.Reply {
	switch req.Chat.Model {
	case "echo":
		return agenttest.Answer(req.User())
	case "block":
		return agenttest.Reply{Block: true}
	case "big":
		n, _ := strconv.Atoi(req.User())
		return agenttest.Answer(strings.Repeat("x", n))
	case "seen":
		b, _ := json.Marshal(map[string]any{"header": req.Header, "query": req.RawQuery, "body": string(req.Body)})
		return agenttest.Answer(string(b))
	case "loop":
		return agenttest.Call("NOPE", `{}`)
	case "500":
		return agenttest.Reply{Status: http.StatusInternalServerError, Body: "broken"}
	case "badjson":
		return agenttest.Reply{Body: "{"}
	}
	return agenttest.Reply{Status: http.StatusNotFound, Body: "no such model"}
}

func TestConformance(t *testing.T) {
	srv := agenttest.NewServerFunc(t, conformanceModel)
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	providers, err := ParseProviders([]string{"t:=" + srv.URL, "dead:=" + dead.URL})
	if err != nil {
		t.Fatal(err)
	}
	v := runnertest.SecretVar
	seen := func(auth string) *contract.Row {
		r := agentRow("SEEN", "t:seen", "You report what you received.")
		r.Auth = auth
		return r
	}
	looping := agentRow("F6", "t:loop", "p")
	runnertest.Run(t, runnertest.Harness{
		Name: RunnerAgent,
		New: func(t testing.TB, cfg runnertest.Config) runner.Runner {
			r, err := New(Config{Providers: providers, Env: cfg.Env, TagSalt: "salt", Limits: runner.Limits{MaxResultBytes: cfg.MaxResultBytes}, MaxSteps: 3})
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
		Echo:  agentRow("ECHO", "t:echo", "# WHAT: echoes\nRepeat the message."),
		Block: agentRow("BLOCK", "t:block", "p"),
		Large: agentRow("BIG", "t:big", "p"),
		Secrets: []*contract.Row{
			seen("bearer:" + v), seen("basic:" + v), seen("oauth:" + v), seen("query:key=" + v),
			seen(`headers:{"X-Api-Key":"$` + v + `","X-Tagged":"k=$` + v + `"}`),
		},
		NoTemplate: true,
		Failures: []*contract.Row{
			agentRow("F1", "t:500", "p"),
			agentRow("F2", "nowhere", "p"),
			{Key: "F3", Type: contract.TypeAgent, Target: "t:echo", Auth: "apikey:" + v},
			agentRow("F4", "t:badjson", "p"),
			agentRow("F5", "dead:m", "p"),
			looping,
			{Key: "F7", Type: contract.TypeAgent, Target: "t:echo", Includes: "BLOCK_A"},
			agentRow("F8", "", "p"),
		},
		Elsewhere: map[string]string{
			"ERR:agent:include:<KEY>:<reason>":   "TestIncludeFailures",
			"ERR:agent:tools:<reason>":           "TestInvokerFailures",
			"ERR:agent:tool:<KEY>:<reason>":      "TestInvokerFailures",
			"ERR:agent:timeout:<duration>":       "TestModelFailures",
			"ERR:agent:response_too_large:<cap>": "TestModelFailures",
			"ERR:agent:401:<body>":               "TestAuthSentToModelSecretNeverInOutcome",
			failToolNotOffered.Literal:           "TestToolNotOfferedIsNotInvoked",
			failBadToolArguments.Literal:         "TestBadToolArgumentsAreNotInvoked",
			failToolCalls.Literal:                "TestTooManyToolCallsRunNone",
			failRequestTooLarge.Literal:          "TestConversationOverRequestCapStops",
		},
		Sentinels: []error{
			ErrNoProvider, ErrBadModel, ErrAuth, ErrStatus, ErrFetch, ErrTimeout, ErrRequestTooLarge, ErrResponseTooLarge,
			ErrBadResponse, ErrStepLimit, ErrToolCalls, ErrInclude, ErrTools, ErrNoInvoker, ErrTool,
		},
		Timeout:       ErrTimeout,
		TimeoutPrefix: "ERR:agent:timeout:",
	})
}
