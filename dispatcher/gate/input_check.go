package gate

import (
	"bytes"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog/wire"
)

// inputSchema refuses a call whose arguments do not satisfy its row's
// input_schema, before anything runs, and records the body the runner gets
// (Admission.Body). The arguments come as the pipe body, mapped onto the schema's
// properties by the row's Signature (contract.Signature.CheckPipe), or as one
// object of named arguments (InvocationRequest.Args), validated as it is and run
// as its pipe form (contract.Signature.PipeOf), so the row's templates see the
// same $1, $2 either way.
//
// A row without input_schema takes the pipe body unchecked, as before, and
// refuses an arguments object: it has no names to map one onto. A request
// carrying both forms is refused. A schema that no longer compiles fails the
// call (FAILED_BEFORE_RUN): the row must be fixed, not the call.
func inputSchema(_ *Gate, in *Input, a *Admission) *Refusal {
	args := sentArgs(in.Req)
	switch {
	case args != nil && in.Req.Body != "":
		return refuseInput(contract.ErrArgsAndBody())
	case a.Row.InputSchema == "" && args != nil:
		return refuseInput(contract.ErrArgsWithoutSchema())
	case a.Row.InputSchema == "":
		return nil
	}
	sig, err := in.Signature, in.SignatureErr
	if sig == nil && err == nil {
		sig, err = contract.CompileSignature(a.Row) // a caller that did not compile it
	}
	if err != nil {
		return refuseSchemaUnusable(err)
	}
	if args == nil {
		if err := sig.CheckPipe(in.Req.Body); err != nil {
			return refuseInput(err)
		}
		return nil
	}
	body, err := sig.PipeOf(args)
	if err != nil {
		return refuseInput(err)
	}
	a.Body = body
	return nil
}

// sentArgs is the request's arguments object, nil when it carries none (JSON
// null included).
func sentArgs(req *wire.InvocationRequest) []byte {
	if t := bytes.TrimSpace(req.Args); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		return t
	}
	return nil
}

// sentLen is the size of what the caller sent as arguments, in whichever form,
// for the payload ceilings.
func sentLen(req *wire.InvocationRequest) int { return len(req.Body) + len(req.Args) }

// sentText is what the caller sent as arguments, as the body_fixed refusal
// fingerprints it: the pipe body, or the arguments object's text.
func sentText(req *wire.InvocationRequest) string {
	if args := sentArgs(req); args != nil {
		return string(args)
	}
	return req.Body
}
