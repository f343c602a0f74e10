// Package ownerkey checks the owner key (x-terminal-key) and throttles wrong
// guesses of it per client address: every entry point that takes the owner key
// (the HTTP facade's routes, /mcp, the console's sign-in) checks it here.
//
// A Guard compares a presented key with the owner key in constant time. Limit
// wrong keys from one client address within Window refuse that address's keys,
// right or wrong, until the window passes: the key is then not compared at all,
// so a throttled address learns nothing of its guesses. Only wrong keys count; a
// request without a key, or with a capability token, is never throttled.
//
// Caveats: the client address is the connection's (http.Request.RemoteAddr),
// never a header the client writes (X-Forwarded-For), so a caller cannot spend
// another address's allowance; behind a reverse proxy every caller shares the
// proxy's address, and wrong keys through it throttle the owner's keys through it
// too, for one window at most. An IPv6 address counts by its /64, the block one
// host usually holds. The addresses remembered are bounded (Config.MaxAddrs): when
// every one of them is striking, the addresses it has no room for share one
// count, so a caller holding that many addresses throttles them together (and an
// owner key from a new address waits with them) rather than starting again.
package ownerkey
