package eventlog

import "github.com/nats-io/nats.go/jetstream"

// PendingOf is f as an append under way, for a test that stands in for the stream.
func PendingOf(f jetstream.PubAckFuture) *Pending { return &Pending{f: f} }
