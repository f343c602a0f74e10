package nodetest

import (
	"bytes"
	"sync"
)

// Buffer collects what a node's logger writes; slog handlers write it from any
// goroutine, and a test reads it while the node runs.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// Bytes is a copy of what was written so far.
func (l *Buffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

// String is what was written so far.
func (l *Buffer) String() string { return string(l.Bytes()) }
