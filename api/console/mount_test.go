package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/internal/nodetest"
)

// The console is served on a loopback listener by default, never when turned
// off, and on a listener other machines reach only when asked for.
func TestConsoleServedWhereItShouldBe(t *testing.T) {
	for _, tc := range []struct {
		name  string
		addr  string
		mode  capdir.ConsoleMode
		serve bool
	}{
		{"loopback, default", "127.0.0.1:0", capdir.ConsoleAuto, true},
		{"loopback, off", "127.0.0.1:0", capdir.ConsoleOff, false},
		{"every interface, default", "0.0.0.0:0", capdir.ConsoleAuto, false},
		{"every interface, asked for", "0.0.0.0:0", capdir.ConsoleOn, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := nodetest.Start(t, func(c *capdir.Config) { c.HTTP.Addr, c.HTTP.Console = tc.addr, tc.mode })
			if got := n.ConsoleURL() != ""; got != tc.serve {
				t.Fatalf("ConsoleURL %q, want served: %v", n.ConsoleURL(), tc.serve)
			}
			url := strings.Replace(n.URL(), "0.0.0.0", "127.0.0.1", 1) + "/console/signin"
			resp, err := http.Get(url)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if want := map[bool]int{true: 200, false: 404}[tc.serve]; resp.StatusCode != want {
				t.Errorf("GET /console/signin: %d, want %d", resp.StatusCode, want)
			}
		})
	}
}
