package wire_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A program that only invokes capabilities over NATS must stay light: the wire
// package and the example bus client depend on nats.go, not on capdir's server side.
func TestBusClientStaysLight(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	forbidden := []string{
		"github.com/nats-io/nats-server",
		"go.etcd.io/bbolt",
		"github.com/prometheus/",
		"github.com/santhosh-tekuri/jsonschema",
		"github.com/capdir/capdir/contract",
		"github.com/capdir/capdir/projector",
		"github.com/capdir/capdir/dispatcher",
	}
	for _, pkg := range []string{"github.com/capdir/capdir/eventlog/wire", "github.com/capdir/capdir/examples/natsclient"} {
		out, err := exec.Command(goTool, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("go list -deps %s listed only %d packages: %s", pkg, len(deps), out)
		}
		for _, d := range deps {
			for _, f := range forbidden {
				if strings.HasPrefix(d, f) {
					t.Errorf("%s depends on %s", pkg, d)
				}
			}
		}
		t.Logf("%s: %d packages", pkg, len(deps))
	}
}
