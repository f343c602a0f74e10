// Package console is the owner's console: server-rendered pages at /console/ over
// the same code paths as the REST API, called in process: every change through
// the command side (package command: the directory write path, minting,
// revocation, approvals, breaker resets), every read as the facade reads. Its templates, stylesheet and one small script are embedded, so the
// binary serves it with no build step and no third-party front-end code.
//
// Sign-in exchanges the owner key, POSTed once, for a random session id in a
// cookie (HttpOnly, SameSite=Strict, Path=/console, Secure over TLS). Sessions live
// in memory: a restart signs everyone out. Every state-changing request carries
// the session's CSRF token (a form field or the X-CSRF-Token header), checked in
// constant time. Every answer carries a strict Content-Security-Policy (no inline
// script or style, nothing from another origin) and refuses to be framed.
//
// # Caveats
//
//   - Sessions are per node: behind a load balancer, sign in to each node.
//   - A wrong key is answered as the API answers it ({"error":"unauthorized"}) and
//     counted per client address by the API's owner-key guard (package ownerkey),
//     with the wrong keys sent to the API and /mcp: past its limit that address is
//     refused (429) until the window passes. Behind a proxy every client shares the
//     proxy's address.
package console
