// Package ownerkey checks the owner key (x-terminal-key) and throttles wrong
// guesses of it per client address: every entry point that takes the owner key
// (the HTTP facade's routes, /mcp, the console's sign-in) checks it here, against
// one count per address.
//
// A Guard compares a presented key with the owner key in constant time. Limit
// wrong keys from one client address within Window refuse that address's keys,
// right or wrong, until the window passes: the comparison is then ignored, so a
// throttled address learns nothing of its guesses. Only wrong keys count; a
// request without a key, or with a capability token, is never throttled. Each key
// is decided in one lock section, so keys sent at once from one address cannot
// pass the limit together. An address reaching the limit is logged once (its
// address and count, never a key).
//
// Caveats: the client address is the connection's (http.Request.RemoteAddr),
// never a header the client writes (X-Forwarded-For), so a caller cannot spend
// another address's allowance; behind a reverse proxy every caller shares the
// proxy's address, and wrong keys through it throttle the owner's keys through it
// too, for one window at most. An IPv6 address counts by its /64, the block one
// host usually holds. The addresses counted are bounded (Config.MaxAddrs): when
// every one of them is striking, the addresses it has no room for share one
// count, which throttles their wrong keys together but never refuses the right
// key, so a caller holding that many addresses cannot lock the owner out (nor
// empty the table to start its own counts again). An address the right key came
// from is remembered (Config.AllowFor, Config.MaxAllowed) and keeps a count of its
// own even then. Against a caller holding more addresses than MaxAddrs, the
// shared count does not stop guessing: the key's length does.
package ownerkey
