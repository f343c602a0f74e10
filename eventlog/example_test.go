package eventlog_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// Open starts an embedded NATS server under the data dir (no TCP listener) and
// creates the two streams; Append writes an event and returns its sequence.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "eventlog-example")
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	l, err := eventlog.Open(ctx, eventlog.Config{DataDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	ev, _ := l.NewEvent(wire.TypeBreakerReset, "owner:terminal-key", eventlog.BreakerReset{Key: "GREET"})
	seq, err := l.Append(ctx, wire.BreakerSubject("GREET"), ev)
	fmt.Println(seq, err, l.Embedded())
	// Output: 1 <nil> true
}
