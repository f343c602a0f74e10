package crashtest

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// LogCount is what the data stream of a stopped node's log holds, per invocation
// id: its INVOCATION_REQUESTED events and its RECEIPT events, counted in the log
// itself (not in the projection).
type LogCount struct {
	Requests map[string]int
	Receipts map[string]int
	// Finished is when the first receipt of each invocation says its call ended
	// (the receipt is appended right after): a call made after it ran an
	// invocation whose receipt was already in the log.
	Finished map[string]time.Time
	Events   uint64 // both streams
}

// CountLog reads the data stream of dataDir's embedded log from sequence 1. It
// locks the data dir, so no node may hold it.
func CountLog(ctx context.Context, dataDir string) (LogCount, error) {
	lock, err := capdir.LockExisting(dataDir)
	if err != nil {
		return LogCount{}, err
	}
	defer lock.Unlock()
	l, err := eventlog.Open(ctx, eventlog.Config{DataDir: dataDir})
	if err != nil {
		return LogCount{}, err
	}
	defer l.Close()
	return Count(ctx, l)
}

// Count reads the data stream of l from sequence 1 to its last sequence now, as
// CountLog does: for a log a node holds, or one on a cluster.
func Count(ctx context.Context, l *eventlog.Log) (LogCount, error) {
	c := LogCount{Requests: map[string]int{}, Receipts: map[string]int{}, Finished: map[string]time.Time{}}
	var dataLast uint64
	for _, s := range wire.Streams {
		last, err := l.LastSeq(ctx, s)
		if err != nil {
			return c, err
		}
		c.Events += last
		if s == wire.DataStream {
			dataLast = last
		}
	}
	err := l.ReadRange(ctx, wire.DataStream, 1, dataLast, 1024, func(b []eventlog.Stored) error {
		for _, s := range b {
			switch s.Type {
			case wire.TypeInvocationRequested:
				var r wire.InvocationRequest
				if err := s.DataAs(&r); err != nil {
					return fmt.Errorf("request at %d: %w", s.Seq, err)
				}
				if r.InvocationID == "" {
					r.InvocationID = wire.RequestInvocationID(s.ID)
				}
				c.Requests[r.InvocationID]++
			case wire.TypeReceipt:
				var r wire.Receipt
				if err := s.DataAs(&r); err != nil {
					return fmt.Errorf("receipt at %d: %w", s.Seq, err)
				}
				if c.Receipts[r.InvocationID]++; c.Receipts[r.InvocationID] == 1 {
					c.Finished[r.InvocationID] = r.FinishedAt
				}
			}
		}
		return nil
	})
	return c, err
}

// Check holds the log to the invocation promises: every acknowledged invocation
// (id -> body) was requested once and has exactly one receipt; no invocation has
// two receipts or two requests; no receipt is without its request; and, when
// complete (every request has had time to run), every request has its receipt.
// It returns one line per violation, sorted.
func (c LogCount) Check(acked map[string]string, complete bool) []string {
	var bad []string
	for inv, body := range acked {
		if c.Requests[inv] != 1 || c.Receipts[inv] != 1 {
			bad = append(bad, fmt.Sprintf("acknowledged invocation %s (body %q): %d requests, %d receipts in the log; want 1 and 1",
				inv, body, c.Requests[inv], c.Receipts[inv]))
		}
	}
	for inv, n := range c.Receipts {
		switch {
		case c.Requests[inv] == 0:
			bad = append(bad, fmt.Sprintf("receipt without a request: %s (%d receipts)", inv, n))
		case n > 1:
			if _, ok := acked[inv]; !ok {
				bad = append(bad, fmt.Sprintf("invocation %s has %d receipts", inv, n))
			}
		}
	}
	for inv, n := range c.Requests {
		switch {
		case n > 1:
			if _, ok := acked[inv]; !ok {
				bad = append(bad, fmt.Sprintf("invocation %s was requested %d times", inv, n))
			}
		case complete && c.Receipts[inv] == 0:
			bad = append(bad, fmt.Sprintf("request %s never got its receipt", inv))
		}
	}
	sort.Strings(bad)
	return bad
}

// ReceiptTotal is the number of RECEIPT events.
func (c LogCount) ReceiptTotal() int {
	n := 0
	for _, v := range c.Receipts {
		n += v
	}
	return n
}
