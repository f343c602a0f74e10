package token_test

import (
	"crypto/ecdsa"
	"fmt"
	"time"

	"github.com/capdir/capdir/dispatcher/gate/token"
)

// The owner mints a token for one row; any node holding the public key verifies it.
func Example() {
	// A node would use token.LoadOrCreateKey(path): the same file on every node.
	key, err := token.GenerateKey()
	if err != nil {
		panic(err)
	}
	minter, _ := token.NewMinter(token.MinterConfig{Key: key, Audience: "capdir-prod"})
	verifier, _ := token.NewVerifier(token.VerifierConfig{Keys: []*ecdsa.PublicKey{key.Public()}, Audience: "capdir-prod"})

	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	raw, _, err := minter.Mint(token.MintRequest{Subject: "agent-7", Scope: token.Scope{Keys: []string{"GREET"}}}, now)
	if err != nil {
		panic(err)
	}
	c, err := verifier.Verify(raw, now.Add(30*time.Second))
	fmt.Println(c.Subject, c.Scope.Keys, c.Risk, c.ExpiryTime().Sub(c.IssuedTime()), err)

	_, err = verifier.Verify(raw, now.Add(2*time.Minute))
	fmt.Println(token.Reason(err))
	// Output:
	// agent-7 [GREET] low 1m0s <nil>
	// token:expired
}
