package token

import (
	"crypto/elliptic"
	"encoding/base64"
	"fmt"
	"math/big"
	"strings"
)

// A token has one form: one string per signed token. The verified-token cache and
// every session keyed on a token's string rely on it, and a compact JWS has more
// than one spelling of the same signature unless both of these are pinned:
//
//   - ECDSA signs (r, s) and verifies (r, N-s) as well. A token's s is at most N/2
//     ("low S"): the minter writes that half, and a verifier refuses the other
//     with ErrBadSignature.
//   - base64url decoding ignores the unused low bits of a segment's last
//     character and line breaks. Every segment is the unpadded base64url of its
//     bytes exactly, or the token is refused with ErrMalformed.

// es256Size is the byte length of each of r and s in an ES256 signature.
const es256Size = 32

// halfOrder is N/2 for P-256: the largest s of a low-S signature.
var halfOrder = new(big.Int).Rsh(elliptic.P256().Params().N, 1)

// checkForm refuses raw unless each of its three segments is the unpadded
// base64url encoding of its bytes, character for character.
func checkForm(raw string) error {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return fmt.Errorf("%w: a token is three base64url segments joined by '.'", ErrMalformed)
	}
	for i, p := range parts {
		b, err := base64.RawURLEncoding.DecodeString(p)
		if err != nil || base64.RawURLEncoding.EncodeToString(b) != p {
			return fmt.Errorf("%w: segment %d is not canonical unpadded base64url", ErrMalformed, i+1)
		}
	}
	return nil
}

// checkLowS refuses an ES256 signature (r || s, 32 bytes each) whose s is over N/2.
func checkLowS(sig []byte) error {
	if len(sig) != 2*es256Size {
		return fmt.Errorf("%w: an ES256 signature is %d bytes, not %d", ErrBadSignature, 2*es256Size, len(sig))
	}
	if new(big.Int).SetBytes(sig[es256Size:]).Cmp(halfOrder) > 0 {
		return fmt.Errorf("%w: the signature's S is in its high form (over N/2); a token has one form, with S at most N/2", ErrBadSignature)
	}
	return nil
}

// LowS returns raw, a compact ES256 JWS, with its signature's s replaced by N-s
// when s is over N/2: the same signature, in the one form a verifier accepts. The
// minter applies it; so must anything else that signs tokens with go-jose.
func LowS(raw string) (string, error) {
	i := strings.LastIndexByte(raw, '.')
	sig, err := base64.RawURLEncoding.DecodeString(raw[i+1:])
	if err != nil || len(sig) != 2*es256Size {
		return "", fmt.Errorf("token: signature of %d bytes is not ES256's %d", len(sig), 2*es256Size)
	}
	s := new(big.Int).SetBytes(sig[es256Size:])
	if s.Cmp(halfOrder) <= 0 {
		return raw, nil
	}
	s.Sub(elliptic.P256().Params().N, s)
	s.FillBytes(sig[es256Size:])
	return raw[:i+1] + base64.RawURLEncoding.EncodeToString(sig), nil
}
