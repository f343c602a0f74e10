package gate_test

import (
	"crypto/ecdsa"
	"fmt"
	"strings"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/gate"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/eventlog/wire"
)

func ExampleGate_Check() {
	key, _ := token.GenerateKey()
	tokens, _ := token.NewVerifier(token.VerifierConfig{Keys: []*ecdsa.PublicKey{key.Public()}, Audience: "capdir-example"})
	g, err := gate.New(gate.Config{
		MaxPayload: 16,
		Suggest:    func(key string) []string { return []string{"GREET"} },
		Tokens:     tokens,
		Revoked:    func(jti string) bool { return false },
	})
	if err != nil {
		panic(err)
	}
	greet := &contract.Row{Key: "GREET", Type: "fn", Target: "echo", Enabled: 1}
	off := &contract.Row{Key: "OFF", Type: "fn", Target: "echo", Enabled: 0}
	for _, in := range []*gate.Input{
		{Req: &wire.InvocationRequest{Key: "GREET", Body: "Ada"}, Row: greet, Fingerprint: "sha256:…", Owner: true},
		{Req: &wire.InvocationRequest{Key: "GREET", Body: strings.Repeat("x", 17)}, Row: greet, Owner: true},
		{Req: &wire.InvocationRequest{Key: "GRET", Body: "Ada"}, NotFound: true, Owner: true},
		{Req: &wire.InvocationRequest{Key: "OFF", Body: "Ada"}, Row: off, Owner: true},
		{Req: &wire.InvocationRequest{Key: "GREET", Body: "Ada"}, Row: greet}, // neither the owner nor a token
	} {
		a, refusal := g.Check(in)
		if refusal != nil {
			fmt.Println(refusal.Status, refusal.Literal)
			continue
		}
		fmt.Println("admitted", a.Row.Key, a.Fingerprint)
	}
	// Output:
	// admitted GREET sha256:…
	// REFUSED_PAYLOAD_TOO_LARGE ERR:payload_too_large:17>16
	// REFUSED_UNKNOWN_KEY {"attempted":"GRET","did_you_mean":["GREET"],"error":"unknown_key","ran":false}
	// REFUSED_DISABLED ERR:disabled:OFF
	// REFUSED_TOKEN token:required
}
