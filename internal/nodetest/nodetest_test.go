package nodetest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/capdir/capdir/internal/nodetest"
)

// cleanupTB is a test as the fixture sees it, whose cleanups run when the test
// calls them, each on its own goroutine as the testing package runs them (a
// cleanup that fails the test with Fatal ends its own goroutine only, and the
// cleanups registered before it still run). Its TempDir, once breakTempDir is
// set, names a directory that cannot be made, so that the replay check fails.
type cleanupTB struct {
	testing.TB
	mu           sync.Mutex
	cleanups     []func()
	failures     []string
	breakTempDir bool
}

func (c *cleanupTB) Cleanup(f func()) { c.cleanups = append(c.cleanups, f) }

func (c *cleanupTB) fail(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failures = append(c.failures, msg)
}

func (c *cleanupTB) Failed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.failures) > 0
}

func (c *cleanupTB) Error(args ...any)                 { c.fail(fmt.Sprint(args...)) }
func (c *cleanupTB) Errorf(format string, args ...any) { c.fail(fmt.Sprintf(format, args...)) }
func (c *cleanupTB) Fatal(args ...any)                 { c.fail(fmt.Sprint(args...)); runtime.Goexit() }
func (c *cleanupTB) Fatalf(format string, args ...any) {
	c.fail(fmt.Sprintf(format, args...))
	runtime.Goexit()
}
func (c *cleanupTB) FailNow() { c.fail("FailNow"); runtime.Goexit() }

func (c *cleanupTB) TempDir() string {
	dir := c.TB.TempDir()
	if !c.breakTempDir {
		return dir
	}
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		c.TB.Fatal(err)
	}
	return file
}

// runCleanups runs the cleanups last first, each to its end.
func (c *cleanupTB) runCleanups() {
	for i := len(c.cleanups) - 1; i >= 0; i-- {
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.cleanups[i]()
		}()
		<-done
	}
}

// A node whose replay check fails at cleanup is stopped all the same: left
// running, it would hold its upstreams' connections, and an httptest server's
// Close, a cleanup registered before the node's, would wait for them for good.
func TestCleanupStopsTheNodeWhenTheReplayCheckFails(t *testing.T) {
	tb := &cleanupTB{TB: t}
	n := nodetest.Start(tb, nil)
	t.Cleanup(func() {
		select {
		case <-n.Done():
		default:
			n.Stop(t.Context())
		}
	})
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", fmt.Sprintf(nodetest.CompliantRow, "demo_now")); code != 201 {
		t.Fatalf("POST: %d %s", code, body)
	}
	tb.breakTempDir = true
	tb.runCleanups()

	if !tb.Failed() || !strings.Contains(strings.Join(tb.failures, "\n"), "replay") {
		t.Fatalf("the replay check did not fail as arranged: %q", tb.failures)
	}
	select {
	case <-n.Done():
	default:
		t.Fatal("the replay check failed and the fixture's cleanup left the node running")
	}
}
