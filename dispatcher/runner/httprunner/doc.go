// Package httprunner runs http rows: target is "METHOD url" with $N slots, content
// the body template, and the auth column's credential applied last. An upstream body
// larger than the cap (1 MiB by default) fails with ERR:http:response_too_large:<cap>
// rather than being cut: a truncated document would pass as a result and break
// whatever parses it.
//
// A credential never leaves the row's origin (scheme, host, port): a call that
// carries one follows a redirect only within that origin, without a Referer, and
// refuses any other with ERR:http:redirect_off_origin:<location without query>,
// reporting the 3xx status as its upstream status. net/http alone would forward
// X-Api-Key to any host, and Authorization to another port of the same host, and
// put a query credential in the Referer. A call without a credential follows
// redirects as net/http does (at most ten).
package httprunner
