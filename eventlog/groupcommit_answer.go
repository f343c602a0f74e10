package eventlog

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrBatchUnmatched is the error of an async append sent in a batch (group
// commit) whose acknowledgement the log could not match to the batch: no count,
// a count or a last sequence that is not the batch's, or no acknowledgement at
// all that it can read. The batch may or may not be stored. An append that
// carries its event id as Nats-Msg-Id is sent again alone, and the log's
// duplicate detection answers it with the sequence that holds it (a copy stored
// with the batch is answered as a duplicate); only an append without it
// (WithoutDedupe), which a second send could store twice, fails with this
// error: read the stream before appending it again.
var ErrBatchUnmatched = errors.New("eventlog: the server's acknowledgement of the append's batch does not match the batch")

// jsAtomicPublishTooLargeBatch is the server's error code for a batch over its
// max_batch_size (nats-server's jetstream { limits { batch { max_msgs } } }), a
// refusal whose description ends in that limit.
const jsAtomicPublishTooLargeBatch = 10199

// pipelineHooks let a test act in the pipeline's windows that no server can be
// made to open: nil outside tests.
type pipelineHooks struct {
	// batchAck, when set, stands in for a batch's acknowledgement: it is given
	// the server's and returns what the log reads.
	batchAck atomic.Pointer[func([]byte) []byte]
	// settling, when set, runs before the appends of a batch out of flight
	// (refused whole, or its acknowledgement unmatched) are sent again alone,
	// while the batch settles (pipeline.settling).
	settling atomic.Pointer[func()]
	// dropPackAck, when set and true for an answer to a pack, makes the log
	// read nothing of it, as if it were lost on its way.
	dropPackAck atomic.Pointer[func() bool]
	// packMade, when set, is given each pack's data as it is made.
	packMade atomic.Pointer[func([]byte)]
}

// maxSize is the most appends a batch holds: maxBatch, or less once the server
// said its limit.
func (g *groupCommit) maxSize() int {
	if n := g.limit.Load(); n > 0 {
		return int(n)
	}
	return maxBatch
}

// learnLimit caps the batches at the server's max_batch_size, which refused a
// batch of size appends with apiErr (its description ends in the limit; when it
// does not, the batches are halved). A limit below two turns group commit off:
// every batch would be refused.
func (g *groupCommit) learnLimit(apiErr *jetstream.APIError, size int) {
	limit := size / 2
	d := apiErr.Description
	if n, err := strconv.Atoi(strings.TrimSpace(d[strings.LastIndexByte(d, ':')+1:])); err == nil && n >= 0 && n < size {
		limit = n
	}
	if limit < 2 {
		g.on.Store(false)
		return
	}
	g.limit.Store(int64(min(limit, maxBatch)))
}

// batchUnmatched completes the batch p, out of flight and settling, whose
// acknowledgement does not say where its appends are (why): each append with
// its event id is sent again alone, to the answer the log's duplicate detection
// gives it; each without fails with ErrBatchUnmatched.
func (pl *pipeline) batchUnmatched(p *Pending, why error) {
	var again []*Pending
	for _, a := range p.members {
		if a.msg.Header.Get(nats.MsgIdHdr) != "" {
			again = append(again, a)
			continue
		}
		a.resolve(Ack{}, fmt.Errorf("%w (%v; %w): the append may or may not be stored, and it carries no event id (WithoutDedupe), so it was not sent again: read the stream before appending it again",
			ErrBatchUnmatched, why, jetstream.ErrInvalidJSAck))
	}
	if len(again) == 0 {
		pl.settled()
		return
	}
	pl.sendEachAgain(again)
}
