// Package flowrunner runs flow rows: a flow's content is a small step language
// that chains other rows, each step a real invocation made through the call's
// runner.Invoker (Call.Sub), so every step passes the gate and gets its own
// receipt. [Parse] reads the language into a [Plan] without running anything;
// [New] returns the runner.
//
// # The language
//
// Lines whose first non-blank character is # are documentation and are removed
// first (contract.StripDocs); what is left is the flow:
//
//	flow    = step { ">" step }
//	step    = call [ "=>" NAME ]  |  fanout [ "=>" NAME ]
//	fanout  = "{" branch { "|" branch } "}"
//	branch  = call [ "=>" NAME ]
//	call    = KEY ":" body
//
// KEY is a row key (A-Z a-z 0-9 _ -). NAME is [A-Z_][A-Z0-9_]*, other than PREV.
// Whitespace and newlines around keys, bodies, separators and names are ignored;
// a body may span lines.
//
// Structure is found by one rule: braces nest, and only text outside every pair of
// braces is structure. A ">" outside braces separates steps, except the ">" of
// "=>". The first "=>" outside braces in a step (or branch) starts its binding.
// A step whose text starts with "{" is a fan-out; its branches are separated by
// the "|" that are outside any brace pair nested within it. Braces inside a body
// ({"q":"a>b|c"}) are literal text and protect what they hold, so a body may carry
// JSON; they must balance across the whole flow.
//
// # Running
//
// The flow's arguments are its invocation body split on "|" (runner.SplitArgs).
// Steps run in order. Each step's body is substituted (runner.Substitute, raw
// mode, bounded by Config.MaxSubstitutionBytes) with $1..$N and $N+ from the
// flow's arguments, $PREV the previous step's output, and $NAME each binding made
// so far; the result is the body of the invocation of KEY. Before the first step,
// $PREV is the flow's whole invocation body. "=> NAME" binds the step's output to
// $NAME for the steps after it; a name is bound at most once in a flow.
//
// A fan-out runs its branches concurrently, each substituted from the same
// variables (a branch does not see its siblings' bindings). Its output, the
// $PREV of the next step, is the branches' outputs joined with "|" in written
// order: a next step "KEY: $PREV" hands them to KEY as its $1, $2, .... A branch
// is reached by name only through its own binding ({ A: x => AX | B: y => BY });
// there is no implicit $A. "=> NAME" after the closing brace binds the joined
// output.
//
// A step stops the flow, and its output is the flow's result, when the output
// starts with "ERR:". A step the dispatcher refuses with a literal that does not
// start with "ERR:" (a token's scope, an unknown key) stops it with
// ERR:flow:refused:<step>:<literal>. For a caller other than the owner
// (Call.Restricted), a step or branch to a row Call.Sub.Row refuses the caller
// (the ones its shape withholds) is named by the flow's step, never by a
// branch's name, and its literal loses the key it ends with:
// ERR:flow:refused:2:scope, where the step's receipt says scope:PB. An Invoker
// failure stops it with
// ERR:flow:invoke:<step>:<error>. In a fan-out, the first failing branch cancels
// the others; once all have returned, the result is the first branch in written
// order that failed before that cancellation. When the caller's context ends, the
// flow stops with ERR:flow:canceled:<reason>, in-flight branches cancelled and
// awaited. Otherwise the result is the last step's output.
//
// Each invocation is made under a step name, unique within the flow and stable
// for a given content, so a redelivered parent finds a finished step's receipt:
// "1", "2", ... for steps, "<step>.<KEY>" for a branch ("3.A"), with ".<n>" added
// from the second branch of one fan-out that invokes the same key ("3.A.2").
// Cycles (a flow reaching itself, directly or through other flows) are refused by
// the dispatcher's depth and ancestry checks; that refusal is a step's output like
// any other.
//
// The Outcome: Result as above; Ran when any step reached its target; CostUSD the
// sum of every step's cost; Children every invocation id, in order, a fan-out's in
// branch order.
//
// Shape mode (Call.Shape) invokes nothing: it returns the plan, each body with the
// flow's arguments substituted and $PREV and bindings left as written:
//
//	{"runner":"flow","shape":true,"steps":[{"bind":"AX","body":"x","key":"A","name":"1"},
//	 {"branches":[{"body":"$AX","key":"B","name":"2.B"},...],"name":"2"}]}
//
// For a caller other than the owner (Call.Restricted), a step or branch whose row
// Call.Sub.Row refuses the caller is {"withheld":true}: its key, name and body
// are not shown, as the flow's contract document does not show them.
//
// # Failures
//
// Before anything runs: ERR:flow:empty, ERR:flow:empty_step:<n>,
// ERR:flow:bad_step:<text> (a step with no ":"), ERR:flow:bad_key:<text>,
// ERR:flow:bad_binding:<name>, ERR:flow:duplicate_binding:<name>,
// ERR:flow:unbalanced_braces:<text>, ERR:flow:bad_fanout:<text> (text after a
// fan-out's "}"), ERR:flow:nested_fanout:<branch>, ERR:flow:empty_branch:<text>,
// ERR:flow:steps:<n>><max>, ERR:flow:fanout:<n>><max>, ERR:flow:no_invoker.
// While running: a step's own ERR: output, ERR:flow:refused:..., ERR:flow:invoke:...,
// ERR:substitution_too_large:<limit>, ERR:flow:canceled:<reason>,
// ERR:flow:result_too_large:<cap>. Each matches a sentinel of errors.go.
//
// # Caveats
//
//   - A step body cannot hold a bare ">" (outside braces), and a branch body cannot
//     hold a bare "|": there is no escape. Put such text inside braces, or pass it
//     in as an argument or an earlier step's output: substituted values are never
//     parsed, so $1, $PREV and bindings carry ">", "|", "=>" and braces safely.
//     A branch that needs several arguments gets them that way ($2+, $PREV or a
//     binding that holds the pipes), or calls a flow row that builds them.
//   - "=>" outside braces always starts a binding; a body cannot hold it bare.
//   - A literal "{" or "}" in a body must be balanced by the flow's text.
//   - Fan-outs do not nest: a branch is one call. Put a fan-out in its own flow row
//     and call that row from the branch.
//   - $PREV after a fan-out holds "|" between the outputs; a branch output that
//     holds "|" itself shifts the next step's $N. Bind branches you read alone.
package flowrunner
