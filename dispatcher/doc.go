// Package dispatcher turns a directory row and an invocation body into a result:
// argument splitting and escape-aware substitution, credential application,
// redaction and shape mode, the runner contract, and the fn, http and nats runners.
// The JetStream workers, the gate and receipts build on these parts.
//
// Nothing here reads the clock, the process environment or a global logger: the fn
// built-ins take a Clock, the http runner takes an Env (os.LookupEnv in production)
// and an *http.Client, the nats runner takes a *nats.Conn.
//
// # Arguments
//
// The invocation body is one string split on "|" (SplitArgs). Substitute expands
// $1..$N, $N+ (the rest, pipes restored), $$ forms (no escaping) and $NAME (from
// vars: $PREV and flow bindings; unresolved names stay literal), escaping each value
// for the position it lands in: path or query of a URL, inside or outside a JSON
// string literal, or not at all.
//
// # Credentials
//
// The auth column names an environment variable and how to apply it (ApplyAuth):
// headers:{"k":"$ENV"}, bearer:ENV, basic:ENV, query:param=ENV, and oauth:ENV, where
// ENV holds an OAuth 2.0 access token (obtained and refreshed outside capdir) that is
// sent as "Authorization: Bearer <token>". A missing or empty variable applies no
// credential; it is not an error. Credential.Tag gives a 4-hex-digit HMAC tag of the
// applied values for noticing rotation without storing anything recoverable.
//
// # Runners
//
// A Runner never returns a Go error; every failure is an Outcome whose Result is the
// literal "ERR:..." text (produced only in errors.go) and whose Err matches a
// sentinel with errors.Is. Runners maps a runner name to its Runner; the row's
// runner column overrides its type.
//
//   - fn: target names a Func in an FnRegistry, matched case-insensitively. Content
//     (after contract.StripDocs) is a JSON array template, ["$1"] when empty.
//     Built-ins: now, echo, last_reply_of.
//   - http: target is "METHOD url". An upstream body larger than the cap (1 MiB by
//     default) fails with ERR:http:response_too_large:<cap> rather than being cut:
//     a truncated document would pass as a result and break whatever parses it.
//   - nats: request-reply on the subject in target.
//
// Shape mode (Call.Shape) builds everything and sends nothing: Outcome.Shape is the
// outbound request passed through RedactDeep with the applied secret values.
//
// # Caveats
//
//   - Only the last argument of a row may contain "|", and only when the template
//     reads it with $N+.
//   - In JSON mode a placeholder outside a string literal is inserted raw, by design
//     ($2+ passes a JSON document through); a row that wants a quoted value must put
//     the placeholder inside quotes: {"q":"$1"}, not {"q":$1}.
//   - A Func runs on the caller's goroutine; one that ignores ctx delays its caller.
//   - Secret scrubbing is by value: a one-character secret would redact every
//     occurrence of that character in results. Use real secrets.
//   - Suggester distances are over bytes after upper-casing; keys are ASCII by
//     convention.
package dispatcher
