package projector_test

import (
	"context"
	"testing"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
)

// The gate reads each row's input_schema compiled once per row version: the same
// Signature for every call until the row is written again, a new one after.
func TestGateSignatureCompiledOncePerRowVersion(t *testing.T) {
	l := logtest.Open(t, "")
	p := running(t, l)
	put := func(action, schema string) {
		t.Helper()
		row := &contract.Row{Key: "T", Type: "fn", Target: "echo", Content: "# WHAT: t\n# ARGS: $1=a", InputSchema: schema, Enabled: 1}
		seq := appendEv(t, l, wire.DirectorySubject("T"), t0, wire.TypeDirectoryMutate,
			contract.DirectoryMutation{Action: action, Key: "T", Row: row})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.WaitFor(ctx, wire.ControlStream, seq); err != nil {
			t.Fatal(err)
		}
	}

	put(contract.ActionCreate, "")
	if g := p.Gate("T", ""); g.RowErr != nil || g.Signature != nil || g.SignatureErr != nil {
		t.Fatalf("a row without input_schema: %+v", g)
	}

	put(contract.ActionReplace, `{"properties":{"a":{"type":"number"}}}`)
	first := p.Gate("T", "")
	if first.Signature == nil || first.SignatureErr != nil {
		t.Fatalf("a row with input_schema: signature %v, %v", first.Signature, first.SignatureErr)
	}
	if err := first.Signature.CheckPipe("x"); err == nil {
		t.Fatal(`"x" passed a number schema`)
	}
	if again := p.Gate("T", ""); again.Signature != first.Signature {
		t.Fatal("the signature was compiled again for the same row version")
	}

	put(contract.ActionReplace, `{"properties":{"a":{"type":"string"}}}`)
	next := p.Gate("T", "")
	if next.Signature == first.Signature || next.Signature == nil {
		t.Fatal("the signature of the replaced version is still cached")
	}
	if err := next.Signature.CheckPipe("x"); err != nil {
		t.Fatalf("the new schema is not the one checked: %v", err)
	}
}
