package contract_test

import (
	"errors"
	"testing"

	"github.com/capdir/capdir/contract"
)

// Whatever a caller sends, the signature answers with nil or an *InputError: no
// panic, no other error.
func FuzzSignature(f *testing.F) {
	for _, seed := range []struct{ body, args string }{
		{"37.77|-122.42", `{"latitude":37.77,"longitude":-122.42}`},
		{"abc||", `{"latitude":"abc"}`},
		{"|||||||||", `[1,2]`},
		{`{"k":1}|[1,"x"]|null`, `{"o":{"k":[{}]},"a":[1e400]}`},
		{"", `{"latitude":1e999999,"s":"\u0000|"}`},
		{"\xff\xfe|1", `{"latitude":`},
	} {
		f.Add(seed.body, seed.args)
	}
	sigs := []*contract.Signature{}
	for _, r := range []contract.Row{
		{Key: "A", Type: "http", Content: tempDoc, InputSchema: tempSchema},
		{Key: "B", Type: "fn", InputSchema: typesSchema},
		{Key: "C", Type: "fn", Content: "# ARGS: $1=key | $2+=json_body", InputSchema: `{"properties":{"json_body":{"type":"object"}}}`},
		{Key: "D", Type: "fn", InputSchema: `{"type":"array","items":{"type":"integer"}}`},
	} {
		s, err := contract.CompileSignature(&r)
		if err != nil {
			f.Fatal(err)
		}
		sigs = append(sigs, s)
	}
	f.Fuzz(func(t *testing.T, body, args string) {
		for _, s := range sigs {
			var ie *contract.InputError
			if err := s.CheckPipe(body); err != nil && !errors.As(err, &ie) {
				t.Fatalf("CheckPipe(%q): %T %v", body, err, err)
			}
			if _, err := s.PipeOf([]byte(args)); err != nil && !errors.As(err, &ie) {
				t.Fatalf("PipeOf(%q): %T %v", args, err, err)
			}
		}
	})
}
