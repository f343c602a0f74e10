package gate

import (
	"strings"

	"github.com/capdir/capdir/eventlog/wire"
)

// The literal refusals of the input check. Each text is produced here and
// nowhere else (what follows ERR:input: by package contract's input_errors.go).

// refuseInput: ERR:input:<what is wrong>, e.g.
// ERR:input:latitude: must be number, got string "abc".
func refuseInput(err error) *Refusal {
	return refuse(wire.StatusRefusedInput, failInput, err.Error())
}

// refuseSchemaUnusable: ERR:input_schema: <why it does not compile>. The row is
// at fault, not the call.
func refuseSchemaUnusable(err error) *Refusal {
	return refuse(wire.StatusFailedBeforeRun, failSchemaUnusable, strings.TrimPrefix(err.Error(), "input_schema: "))
}
