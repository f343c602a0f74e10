// Package token holds capdir's capability tokens: what a caller other than the
// owner presents to invoke rows. A token is a JWT signed with ES256 by the owner's
// signing key (ECDSA P-256), short-lived (60 s unless the owner asks for more, never
// more than the minter's maximum), and carries what it permits:
//
//   - scope: the row keys and/or categories it may invoke;
//   - risk: its risk ceiling, "low" or "high" (a sensitive row needs "high");
//   - pin: optionally, the contract fingerprint of the one row it was minted for;
//   - body: optionally, the one body it may send;
//   - max_payload: optionally, the largest body it may send, in bytes.
//
// A [Minter] makes tokens; a [Verifier] checks one (signature, algorithm, key id,
// expiry and issue time with a small leeway, audience) and remembers the tokens it
// has verified, so presenting the same token on every call costs a hash and a map
// lookup rather than an ECDSA verification. Whether the token is revoked, and what
// its scope and ceilings allow for a given row, is the gate's business
// (package dispatcher/gate): this package only says who signed what.
//
// Every clock is passed in: Mint and Verify take now.
//
// # The JOSE library
//
// Tokens are built and parsed with github.com/go-jose/go-jose/v4 rather than
// github.com/golang-jwt/jwt/v5. Both are maintained; go-jose is chosen because its
// parser cannot be called without the list of algorithms it may accept
// (ParseSignedCompact refuses "none", HS256 or anything else not listed before any
// key is touched, so an algorithm-confusion attack has no code path to reach), it
// parses only the compact serialization here, it refuses unknown "crit" headers,
// and it computes the RFC 7638 key thumbprint that serves as "kid". Claim
// validation is this package's own (strict decoding, required claims, leeway),
// so every refusal maps to one sentinel and one literal reason. go-jose has no
// dependencies of its own.
//
// # Caveats
//
//   - A token is a bearer credential: whoever holds it may use it until it expires
//     or is revoked. Keep TTLs short; 60 s is the default.
//   - The verifier's cache holds a verified token until its expiry (plus leeway). A
//     verifier's key set is fixed when it is made: to retire a key, start verifiers
//     without it (their caches start empty).
//   - A token carrying a claim this version does not know is refused as malformed,
//     not accepted with the claim ignored: a newer minter's restriction is never
//     silently dropped by an older verifier.
//   - A token has one string. The minter writes its signature with S at most N/2;
//     a verifier refuses the same signature with S as N-S (token:bad_signature) and
//     any segment that is not the canonical unpadded base64url of its bytes
//     (token:malformed), so the cache, and anything else keyed on a token's
//     string, sees one token once. A token minted before this rule with a high S
//     is refused: mint it again.
//   - The key file must be readable by its owner only (mode 0600); a file readable
//     by group or others is refused. Nodes that share one signing key load the same
//     file (copied, or on shared storage).
package token
