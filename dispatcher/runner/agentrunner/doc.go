// Package agentrunner runs agent rows: it sends the row's prompt and the caller's
// body to a model through an OpenAI-compatible chat completion API, offers the rows
// of its allowed_categories as tools, runs the tools the model calls as real
// invocations, and returns the model's final answer.
//
// # The row
//
//	target              a model id: "gpt-4.1", "gw:openai/gpt-4.1-mini"
//	content             the system prompt (docstring lines removed, see Prompt)
//	includes            prompt-block row keys, comma-separated, composed in front of content
//	allowed_categories  the categories whose rows are offered as tools, comma-separated, or *
//	auth                the credential for the model server, as for http rows
//
// The invocation body is the user message, sent verbatim: an agent row substitutes
// no $N into anything.
//
// # Providers
//
// Where a model id goes is the provider table's business (Config.Providers, built
// by ParseProviders from PREFIX=BASE_URL entries, e.g. a repeated
// --agent-provider flag or a comma-separated CAPDIR_AGENT_PROVIDERS). The longest
// prefix matching the model id wins, and * matches any model after every other
// prefix. The call is POST {BASE_URL}/chat/completions. The model id is sent as the
// row names it, except that a prefix ending in ':' is a routing prefix and is
// removed: with gw:=https://gateway.example/v1, the row gw:openai/gpt-4.1-mini sends
// "openai/gpt-4.1-mini" to https://gateway.example/v1/chat/completions. A model id
// no prefix matches fails with ERR:agent:no_provider:<model> and nothing is sent.
//
// The auth column is applied to that request exactly as for an http row
// (runner.ApplyAuth, through the same guarded Env, so a row reads only the
// variables the operator allows). The runner follows no redirect: the credential
// goes to the provider's URL and nowhere else.
//
// # The prompt
//
// The system prompt is the Prompt of each row named in includes, in order, then the
// row's own, joined by blank lines. Blocks are read through Call.Sub.Row when the
// call runs, so editing a block changes every agent that includes it on its next
// call. A row's Prompt is its content without the lines whose first non-space
// character is '#', as every runner strips the docstring before it runs: an agent
// row can carry # WHAT: and # WHEN_TO_USE: like any row, and they are not sent. The
// same stripped text is what the contract fingerprint covers.
//
// # Tools
//
// When allowed_categories is set, the rows Call.Sub.Tools lists for it (the
// dispatcher keeps the enabled rows the caller may invoke) are offered as tools.
// runner.ToolOf builds one from a row: its key as the name, its description and
// WHEN_TO_USE as the description, and its input_schema as the parameters when that
// is an object schema, else one string parameter "args". A key longer than
// MaxToolNameLen is not offered.
//
// Each tool call the model makes runs as Call.Sub.Invoke(ctx, "tool-<n>", key,
// in), n counting the call's tool calls from 1, one after the other in the order
// the model gave them. in is the "args" string as the pipe body, or, for a row
// with its own schema, the arguments object itself (runner.Input.Args), which
// the gate checks against the schema as it checks POST /api/dispatch's object
// body. The step's result (a gate
// refusal included) goes back to the model as the tool message, and its invocation
// id is appended to Outcome.Children. A tool that was not offered is answered with
// ERR:agent:tool_not_offered:<name>: ..., and arguments that are not a JSON object
// (or an "args" that is not a string) with ERR:agent:bad_tool_arguments:..., and
// nothing is invoked. The model credential is scrubbed from a tool's arguments: it
// never leaves for another row.
//
// The loop ends at an answer without tool calls, whose content is the Result. A
// model that still calls tools in the answer to its MaxSteps-th request fails the
// call with ERR:agent:step_limit:<MaxSteps>; the tools of that last answer are not
// run. An answer calling more than Config.MaxToolCalls tools (128 by default)
// fails the call with ERR:agent:tool_calls:<n>><max>, and none of them run.
// The conversation sent back to the model holds every tool result of the call: one
// that grows past Config.MaxRequestBytes (16 MiB by default) fails the call with
// ERR:agent:request_too_large:<cap>, the tools after the result that took it past
// are not run, and it is not sent.
//
// # Usage and cost
//
// Outcome.PromptTokens and CompletionTokens sum the usage of every model response
// of the call, failed calls included. Outcome.CostUSD prices them with
// Config.Prices (ParsePrices: MODEL=IN/OUT in USD per million tokens, MODEL exact,
// a PREFIX* or *), keyed by the model id as the row names it; an unpriced model
// costs 0. The cost of the tools is on their own receipts, not added here.
//
// # Failures
//
// Every failure is a literal built in errors.go, matching a sentinel there:
//
//	ERR:agent:<status>:<body>          the model server answered other than 2xx (body scrubbed of the credential)
//	ERR:agent:timeout:<d>              one model request took longer than Config.Timeout
//	ERR:agent:canceled:<reason>        the caller's context ended
//	ERR:agent:fetch:<reason>           DNS, TLS or connection failure
//	ERR:agent:request_too_large:<cap>  the conversation, tool results included, over Config.MaxRequestBytes
//	ERR:agent:response_too_large:<cap> a model response over Config.MaxResponseBytes
//	ERR:agent:result_too_large:<cap>   a final answer over Config.MaxResultBytes, refused whole
//	ERR:agent:bad_response:<reason>    the answer is not a chat completion
//	ERR:agent:no_provider:<model>      no provider prefix matches the model id
//	ERR:agent:bad_model:<reason>       the target names no model
//	ERR:agent:<KEY>:ERR:auth:...       the auth column is malformed or names a refused variable
//	ERR:agent:include:<KEY>:<reason>   a block of includes cannot be read
//	ERR:agent:tools:<reason>           the tools of allowed_categories cannot be listed
//	ERR:agent:tool:<KEY>:<reason>      the Invoker failed to run a tool (a gate refusal is a result, not this)
//	ERR:agent:step_limit:<n>           still calling tools after n model requests
//	ERR:agent:tool_calls:<n>><max>     one answer called more than Config.MaxToolCalls tools
//	ERR:agent:no_invoker:<column>      includes or allowed_categories, and no Call.Sub
//
// Ran and Upstream report the model server's last answer, so a 401 counts toward
// the auth breaker as an http row's does.
//
// Shape mode builds the first request (the includes and the tool listing are read)
// and returns it redacted; nothing is sent and no tool runs. For a caller other
// than the owner (Call.Restricted) the system message says the prompt is
// withheld: the row's contract document does not show it either.
//
// # Testing
//
// Package agenttest is a fake model server that scripts answers and tool calls and
// records every request, for this package's tests and the dispatcher's.
//
// # Caveats
//
//   - A prompt line beginning with '#' is a docstring line and is not sent: write a
//     Markdown heading in a prompt as "Rules:" or "**Rules**", not "# Rules".
//   - Tool calls run one at a time, and each is a real invocation with its own
//     receipt: Config.MaxToolCalls bounds how many one answer may ask for, and the
//     dispatcher's tree bound how many one call tree makes.
//   - A model given its own row as a tool may call itself; the dispatcher's depth
//     bound stops the recursion.
package agentrunner
