package mcprunner

import (
	"os"
	"strings"
)

// childEnv is the environment of a stdio upstream's process: the node's own,
// without capdir's variables (CAPDIR_*, the owner key among them). A tool of the
// upstream that prints its environment cannot hand them to a caller.
func childEnv() []string {
	env := os.Environ()
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(strings.ToUpper(name), "CAPDIR_") {
			out = append(out, kv)
		}
	}
	return out
}
