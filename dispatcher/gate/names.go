package gate

import (
	"reflect"
	"runtime"
	"strings"
)

// checkNames are the names of checks' functions, in its order ("credential",
// "inScope", …): what a refusal's Check says.
var checkNames = func() []string {
	names := make([]string, len(checks))
	for i, c := range checks {
		n := runtime.FuncForPC(reflect.ValueOf(c).Pointer()).Name()
		names[i] = n[strings.LastIndexByte(n, '.')+1:]
	}
	return names
}()
