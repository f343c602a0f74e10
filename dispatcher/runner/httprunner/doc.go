// Package httprunner runs http rows: target is "METHOD url" with $N slots, content
// the body template, and the auth column's credential applied last. An upstream body
// larger than the cap (1 MiB by default) fails with ERR:http:response_too_large:<cap>
// rather than being cut: a truncated document would pass as a result and break
// whatever parses it.
//
// A credential never leaves the row's origin (scheme, host, port), and that origin
// is the one the target's URL template writes out, never one a caller's arguments
// make: a call of a row with auth whose final URL has another origin fails before
// anything is sent with ERR:http:origin_changed:<want>!=<got> (the directory
// refuses such a target on write; see contract.CheckCredentialOrigin). A call that
// carries a credential follows a redirect only within that origin, without a Referer, and
// refuses any other with ERR:http:redirect_off_origin:<location without query>,
// reporting the 3xx status as its upstream status. net/http alone would forward
// X-Api-Key to any host, and Authorization to another port of the same host, and
// put a query credential in the Referer. A call without a credential follows
// redirects as net/http does (at most ten).
package httprunner
