package e2e_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner"
	"github.com/capdir/capdir/dispatcher/runner/mcprunner/mcptest"
	"github.com/capdir/capdir/internal/nodetest"
)

// Upstreams are synced concurrently: one whose tools/list hangs (held until
// the test ends, far within the hour the runner's timeout allows) and one that
// cannot be reached delay and fail no other's sync: the rows of the two that
// answer appear while the hung one's listing is still held.
func TestAHungUpstreamDoesNotHoldTheOthersSync(t *testing.T) {
	srv, _ := mcptest.Server(t)
	arrived, release := make(chan struct{}), make(chan struct{})
	held := httptest.NewServer(holdToolsList(mcptest.Handler(srv), arrived, release))
	t.Cleanup(held.Close)
	t.Cleanup(func() { close(release) })
	_, b := mcptest.Server(t)
	_, d := mcptest.Server(t)
	n := nodetest.Start(t, func(c *capdir.Config) {
		c.MCPRelist = -1
		c.MCPRunner.Timeout = time.Hour
		c.MCPUpstreams = mcprunner.Static{
			"a_hung": {Name: "a_hung", URL: held.URL},
			"b_ok":   {Name: "b_ok", URL: b.URL},
			"c_down": {Name: "c_down", URL: goneURL()},
			"d_ok":   {Name: "d_ok", URL: d.URL},
		}
	})
	<-arrived // the hung upstream's listing is held from here to the test's end
	waitRow(t, n, "B_OK_STRUCTURED", true)
	waitRow(t, n, "D_OK_STRUCTURED", true)
	waitRow(t, n, "A_HUNG_ECHO", false)
}

// goneURL is the address of a server that is no longer there.
func goneURL() string {
	hs := httptest.NewServer(nil)
	hs.Close()
	return hs.URL
}
