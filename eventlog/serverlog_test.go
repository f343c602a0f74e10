package eventlog_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/capdir/capdir/eventlog"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The embedded server's notices reach the configured logger, marked as the NATS
// server's.
func TestEmbeddedServerLogsToTheConfiguredLogger(t *testing.T) {
	var buf syncBuf
	l, err := eventlog.Open(context.Background(), eventlog.Config{DataDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	out := buf.String()
	if !strings.Contains(out, "component=nats-server") || !strings.Contains(out, "JetStream") {
		t.Fatalf("the embedded server's start-up notices are not in the log:\n%s", out)
	}
}
