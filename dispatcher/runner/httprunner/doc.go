// Package httprunner runs http rows: target is "METHOD url" with $N slots, content
// the body template, and the auth column's credential applied last. An upstream body
// larger than the cap (1 MiB by default) fails with ERR:http:response_too_large:<cap>
// rather than being cut: a truncated document would pass as a result and break
// whatever parses it.
package httprunner
