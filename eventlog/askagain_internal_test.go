package eventlog

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A start's request the cluster answers with "no suitable peers for placement"
// (a cluster that has not yet heard from enough servers) is asked again until
// it is placed; any other refusal is the answer at once, and a cluster that
// never places it is the start's failure once its time is up, with its error.
func TestAskAgainWaitsForPlacement(t *testing.T) {
	noPeers := &jetstream.APIError{Code: 400, ErrorCode: jsClusterNoPeers, Description: "no suitable peers for placement, peer offline"}
	asks := 0
	v, err := askAgain(context.Background(), func(context.Context) (int, error) {
		if asks++; asks < 3 {
			return 0, noPeers
		}
		return 7, nil
	})
	if v != 7 || err != nil || asks != 3 {
		t.Fatalf("askAgain = %d, %v after %d asks; want 7 after 3", v, err, asks)
	}

	other := &jetstream.APIError{Code: 400, ErrorCode: 10058, Description: "stream name already in use with a different configuration"}
	asks = 0
	if _, err := askAgain(context.Background(), func(context.Context) (int, error) { asks++; return 0, other }); !errors.Is(err, other) || asks != 1 {
		t.Fatalf("another refusal: %v after %d asks; want it at once", err, asks)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*electionRetryWait)
	defer cancel()
	start := time.Now()
	if _, err := askAgain(ctx, func(context.Context) (int, error) { return 0, noPeers }); !noPeersYet(err) {
		t.Fatalf("a cluster that never places it: %v; want its answer", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("asked for %v past the start's time", time.Since(start))
	}
}
