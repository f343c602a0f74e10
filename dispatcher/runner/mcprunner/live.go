package mcprunner

import (
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capdir/capdir/dispatcher/runner"
)

// live is one client session and the count of the calls using it. It is
// closed once it is retired (its connection failed, its upstream's
// registration changed, or the runner stopped) and no call uses it any more:
// a call that holds it never meets it closing because another call dropped it.
// (The SDK's Close waits for calls in flight but refuses calls made after it
// with "client is closing", so a session closed while callers hold it fails
// the calls they are about to make.)
type live struct {
	cs      *mcp.ClientSession
	redact  runner.Redactor
	tag     string
	tracked bool

	mu      sync.Mutex
	users   int
	retired bool
}

// acquire adds a use; false when l is retired already.
func (l *live) acquire() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.retired {
		return false
	}
	l.users++
	return true
}

func (l *live) conn() conn {
	return conn{l: l, cs: l.cs, redact: l.redact, tag: l.tag, tracked: l.tracked}
}

// release ends a use; the last use of a retired l closes it.
func (l *live) release() {
	l.mu.Lock()
	l.users--
	last := l.retired && l.users == 0
	l.mu.Unlock()
	if last {
		l.cs.Close()
	}
}

// retire marks l for closing: at once when no call uses it, else when the last
// one releases it. It is idempotent.
func (l *live) retire() {
	l.mu.Lock()
	was := l.retired
	l.retired = true
	idle := l.users == 0
	l.mu.Unlock()
	if !was && idle {
		l.cs.Close()
	}
}
