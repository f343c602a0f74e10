package eventlog

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// An append in flight when the connection closes for good (here closed at once,
// as when its reconnects are spent) fails with the connection lost, as on a
// reconnect, instead of waiting out its acknowledgement timeout: no
// acknowledgement comes on a closed connection.
func TestPipelineFailsAppendsInFlightWhenTheConnectionCloses(t *testing.T) {
	srv, err := server.NewServer(&server.Options{DontListen: true, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	nc, err := nats.Connect("", nats.InProcessServer(srv))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// A subscriber that never answers: the append is delivered, and neither
	// acknowledged nor told that no stream answers.
	silent, err := nc.SubscribeSync("silent")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := newPipeline(nc, time.Hour, time.Hour, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := &Pending{msg: nats.Msg{Subject: "silent", Data: []byte("x")}}
	if err := pl.send(p); err != nil {
		t.Fatal(err)
	}
	if _, err := silent.NextMsg(10 * time.Second); err != nil {
		t.Fatalf("the append never went out: %v", err)
	}
	nc.Close()
	select {
	case <-p.Failed():
		if err := p.Err(); !errors.Is(err, nats.ErrDisconnected) {
			t.Fatalf("the append failed with %v; want the connection lost (%v)", err, nats.ErrDisconnected)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the append in flight did not fail when its connection closed")
	}
	if n := pl.pending(); n != 0 {
		t.Fatalf("%d appends still in flight", n)
	}
}
