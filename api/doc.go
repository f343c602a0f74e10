// Package api is capdir's HTTP facade: the directory REST surface, dispatch,
// receipts, breakers, capability tokens, health and metrics, with one
// error-to-status table for every route (status.go). It is a thin adapter over the
// command side (package command): a route that changes something decodes the
// request, calls the directory's write path, an import, Tokens or Approvals there,
// and encodes the answer. Owner
// routes require the x-terminal-key header (a capability token there is 401: the
// route needs the owner key); dispatch also takes a capability token as
// Authorization: Bearer; public routes (a receipt's public view and confirm) show no
// arguments, no results, no secrets, and nothing to test a guess about the
// arguments or result against. The Go client of these routes is package api/client.
//
// # Capability tokens
//
//	POST   /api/tokens        (owner) mint; 201 {"token","jti","exp","claims"}
//	DELETE /api/tokens/{jti}  (owner) revoke: one TOKEN_REVOKED, answered once folded
//	POST   /api/dispatch      with Authorization: Bearer <token>: the token's checks of
//	                          who the caller is run first (401, nothing appended), then
//	                          the gate's; a refusal is a *TokenRefusedError, which the
//	                          error table answers (401 REFUSED_TOKEN, 403 REFUSED_SCOPE,
//	                          409 REFUSED_CONTRACT_CHANGED, 413 REFUSED_PAYLOAD_TOO_LARGE)
//	                          with the literal reason in "error"
//
// # Approvals (approvals.go)
//
//	POST   /api/dispatch         a token holder's call to a sensitive row: 202
//	                             {"pending":true,"status":"PENDING_APPROVAL","approval":…}
//	GET    /api/approvals        (owner) the calls waiting for a decision, body included
//	GET    /api/approvals/{id}   (owner) one approval in any state
//	POST   /api/approvals/{id}   (owner) {"decision":"approve"|"deny"}; 409 decided,
//	                             410 expired, 404 unknown
//
// Every write becomes an event on the log; a handler answers after the projector has
// applied it, so a client always reads its own writes.
//
// # Directory
//
// Owner routes (x-terminal-key; without it 401 {"error":"unauthorized","how_to_fix":…}):
//
//	GET    /api/directory                 rows in canonical order; ?category= ?type= ?enabled=0|1,
//	                                      ?limit= (default 100, at most 1000) ?offset=;
//	                                      {"rows":[…],"total":N,"limit":L,"offset":O}
//	GET    /api/directory/{key}           the row with row_num; 404 {"error":"not_found","key":…}
//	POST   /api/directory                 contract.Create (key and type required); 201
//	                                      {"ok":true,"key":…,"updated_at":…}; a present key is 409
//	PUT    /api/directory/{key}           contract.Replace, the whole row; 201 when it created
//	                                      the row, else 200
//	PATCH  /api/directory/{key}           contract.Patch over the thirteen allow-listed fields;
//	                                      200 with "ignored":[…] naming the others; a body naming
//	                                      none is {"error":"no recognized fields"}, 400
//	DELETE /api/directory/{key}           {"ok":true,"key":…,"deleted":1}; 404 when absent
//	POST   /api/directory/import          a JSON array or NDJSON of rows, each like a POST, or with
//	                                      ?mode=upsert like a PUT when the key is present; 200
//	                                      {"ok":N,"failed":[{"index":i,"key":…,"error":…},…]}
//
// Every accepted write is one DIRECTORY_MUTATE event (action create, replace, patch or
// delete; the key; the row after), appended by actor owner:terminal-key with the
// key subject's expected last sequence set to the one the write read, then awaited
// in the projection. One Directory (Server.Directory) does this for every route, the
// import and any other entry point; it speaks no HTTP.
//
// # Errors
//
// A handler never writes the status of an error: it returns the error, and one
// table (errorTable, status.go) maps sentinels and error types, with errors.Is and
// errors.As, to the status and JSON body of every route. A refused request appends
// nothing. A path no route serves is 404 {"error":"not_found","path":…}; a path
// served only for other methods is 405 {"error":"method_not_allowed","allow":…} with
// an Allow header. The statuses:
//
//	400  hygiene refusals, written verbatim as RefusalError.Body:
//	     {"error":"registry_hygiene_refused: <code>","how_to_fix":…,"state_changed":false};
//	     {"error":"no recognized fields"}; and {"error":"<what to fix>"} for malformed
//	     JSON, wrong types, unknown fields, an unknown type, bad key characters, invalid
//	     values, a PUT renaming a row, bad query parameters
//	401  {"error":"unauthorized","how_to_fix":…}
//	404  {"error":"not_found","key":…}; a receipt: {"error":"not_found","invocation_id":…};
//	     a dispatch to an unknown key: the refusal with did_you_mean
//	405  {"error":"method_not_allowed","allow":…}
//	409  {"error":"exists: …","key":…} (POST of a present key);
//	     {"error":"conflict: … retry"} (another writer changed the key between this
//	     request's read and its append; nothing was written)
//	408  request_timeout: the body stopped arriving before the server's read timeout
//	413  payload_too_large, naming the limit: a body over Config.MaxBody, a row over the
//	     row limit (MaxBody, and the log's MaxData for the row as the log stores it),
//	     an import body over Config.MaxImportBody; an import row over the row limit
//	     fails alone, in "failed"; a dispatch body over the payload ceiling
//	429  too_many_imports: Config.MaxImports imports are running (Retry-After);
//	     too_many_wrong_keys: the client's address sent too many wrong owner keys
//	     (package api/ownerkey; Retry-After), the key not compared
//	502  the dispatcher could not take the request
//	503  the log or the projection failed; no dispatcher on this node; the log is
//	     electing a leader (Retry-After): nothing was stored, send it again
//	504  appended, but not projected within Config.WriteTimeout; it will show up
//	507  the log's disk is full: nothing was stored; the log takes writes again
//	     by itself once its disk has room
//
// Hygiene refusals are 400 rather than 422 so that every "fix your request" answer
// has one status; the body's "error" prefix tells them apart.
//
// A request refused before its body is read to its end (401, 413 by its declared
// length, 429) is answered at once with Connection: close; the server waits for the
// rest of the body at most unreadLinger (500 ms), dropping it, then closes the
// connection (see Server.handle and guardBody).
//
// # Caveats
//
//   - A write reads the projection, so a write racing one the projector has not yet
//     applied gets a 409 conflict even though no other request is in flight: retry.
//   - An import is not atomic: the rows that pass are written even when others fail.
//     Only an import body that is not well-formed JSON (an array) is refused whole.
//     An NDJSON body that stops early (a stall past the read timeout, the import cap)
//     keeps the rows before that point; the answer says so in "error".
//   - An import streams: an NDJSON row is written as it arrives; an array is spooled to
//     a temporary file (Config.ImportSpoolDir) while its syntax is checked, then
//     written. Memory holds one row and the failures, not the body.
//   - A key repeated within one import fails with "exists" unless ?mode=upsert, where
//     the later row replaces the earlier one.
package api
