package eventlog_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/nats-io/nats-server/v2/server"
)

// startAt starts a JetStream server on port (server.RANDOM_PORT for any) whose
// largest message is maxPayload, storing in dir.
func startAt(t *testing.T, port int, maxPayload int32, dir string) *server.Server {
	t.Helper()
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: true,
		StoreDir: dir, NoSigs: true, NoLog: true, MaxPayload: maxPayload})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(20 * time.Second) {
		t.Fatal("server not ready")
	}
	return srv
}

// The log's largest message is the server's, read again after each reconnect:
// a server started again with another max_payload is followed (the packer and
// group commit size their messages by it).
func TestMaxPayloadFollowsTheServerAfterAReconnect(t *testing.T) {
	dir := t.TempDir()
	srv := startAt(t, server.RANDOM_PORT, 2<<20, dir)
	port := srv.Addr().(*net.TCPAddr).Port
	l, err := eventlog.Open(context.Background(), eventlog.Config{NATSURL: srv.ClientURL()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got := l.MaxPayload(); got != 2<<20 {
		t.Fatalf("MaxPayload %d, want the server's %d", got, 2<<20)
	}
	srv.Shutdown()
	srv.WaitForShutdown()
	srv = startAt(t, port, 3<<20, dir)
	defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
	deadline := time.Now().Add(20 * time.Second)
	for l.MaxPayload() != 3<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("MaxPayload %d after the server came back with %d", l.MaxPayload(), 3<<20)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
