package bench

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	bolt "go.etcd.io/bbolt"
)

// The packed reference's stream, subjects and consumer, beside the reference's
// on the same server.
const (
	packStream   = "BENCH_PACK"
	packReqSubj  = "bench.pack.req"
	packRcptSubj = "bench.pack.rcpt"
	packWorkers  = "bench-pack-workers"
)

// MaxPack is the most events the packed reference puts in one JetStream message.
const MaxPack = 256

// maxPackEvent is the largest event a pack may hold; a pack declaring a longer
// one is malformed.
const maxPackEvent = 64 << 10

// errMalformedPack is a packed message that is not a sequence of length-prefixed
// events.
var errMalformedPack = errors.New("bench: malformed pack: want up to 256 events, each a uvarint length (1 to 65536) and that many bytes")

// appendPacked appends one event to a pack: its length as a uvarint, then its
// bytes.
func appendPacked(pack, ev []byte) []byte {
	pack = binary.AppendUvarint(pack, uint64(len(ev)))
	return append(pack, ev...)
}

// unpack splits a pack into its events (sub-slices of b, not copies) after
// appending them to evs.
func unpack(evs [][]byte, b []byte) ([][]byte, error) {
	for n := 0; len(b) > 0; n++ {
		l, k := binary.Uvarint(b)
		if k <= 0 || l == 0 || l > maxPackEvent || uint64(len(b)-k) < l || n == MaxPack {
			return nil, errMalformedPack
		}
		evs = append(evs, b[k:k+int(l)])
		b = b[k+int(l):]
	}
	if len(evs) == 0 {
		return nil, errMalformedPack
	}
	return evs, nil
}

// packOutcome is what wakes a caller of the packed reference: its receipt once
// folded, or its append's error.
type packOutcome struct {
	rc  refReceipt
	err error
}

// packItem is one request waiting for the packer.
type packItem struct {
	id string
	ev []byte
	ch chan packOutcome
}

// Packed is the reference pipeline (Reference) with several events in one
// JetStream message: requests that arrive while the previous append is in flight
// wait and go out together, as one message holding each request event (with its
// own id) length-prefixed; a pull worker takes one such message, runs each of its
// requests (echo, as the reference), appends their receipts packed the same way
// as one message, awaits its acknowledgement and acks the request message once;
// the follower folds every receipt of a message into bbolt in one Update with its
// checkpoint and wakes each caller. It measures what packing would gain, and is
// not capdir's shape (see docs/performance.md).
type Packed struct {
	js  jetstream.JetStream
	db  *bolt.DB
	ids atomic.Uint64
	pfx string

	mu      sync.Mutex
	waiters map[string]chan packOutcome
	queue   []packItem
	spare   []packItem
	wake    chan struct{}

	cancel context.CancelFunc
	wg     sync.WaitGroup
	stops  []func()
	folded atomic.Uint64
}

// StartPacked starts the packed reference on nc's server with workers worker
// goroutines and its bbolt file in dir. Close stops it and deletes its stream.
func StartPacked(ctx context.Context, nc *nats.Conn, dir string, workers int) (*Packed, error) {
	js, s, db, err := openPipelineStore(ctx, nc, dir, "packed reference", packStream, []string{packReqSubj, packRcptSubj}, "packed.db")
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancel(context.Background())
	p := &Packed{js: js, db: db, pfx: strconv.FormatInt(time.Now().UnixNano(), 36) + "-",
		waiters: map[string]chan packOutcome{}, wake: make(chan struct{}, 1), cancel: cancel}
	// The packer: one append in flight, the requests arriving meanwhile packed
	// into the next.
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.pack(rctx)
	}()
	wc, err := s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: packWorkers, FilterSubject: packReqSubj, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: 30 * time.Second, MaxAckPending: 4 * workers,
	})
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("bench: packed reference workers' consumer: %w", err)
	}
	it, err := wc.Messages(jetstream.PullMaxMessages(2 * workers))
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("bench: packed reference workers' consumer: %w", err)
	}
	p.stops = append(p.stops, it.Stop)
	work := make(chan jetstream.Msg, workers)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(work)
		for {
			m, err := it.Next()
			if err != nil {
				return // stopped
			}
			work <- m
		}
	}()
	for range workers {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			var evs [][]byte
			for m := range work {
				evs = p.work(rctx, m, evs[:0])
			}
		}()
	}
	fc, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{packRcptSubj}})
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("bench: packed reference follower: %w", err)
	}
	fit, err := fc.Messages()
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("bench: packed reference follower: %w", err)
	}
	p.stops = append(p.stops, fit.Stop)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		var evs [][]byte
		var rcs []refReceipt
		for {
			m, err := fit.Next()
			if err != nil {
				return
			}
			evs, rcs = p.fold(m, evs[:0], rcs[:0])
		}
	}()
	return p, nil
}

// pack sends the queued requests, up to MaxPack a message, one message in flight
// at a time, until ctx ends; then it fails whatever is still queued.
func (p *Packed) pack(ctx context.Context) {
	var buf []byte
	for {
		select {
		case <-p.wake:
		case <-ctx.Done():
			p.mu.Lock()
			q := p.queue
			p.queue = nil
			p.mu.Unlock()
			for _, it := range q {
				it.ch <- packOutcome{err: ctx.Err()}
			}
			return
		}
		for {
			// The queue and its spare swap arrays; the spare is nil while a batch
			// is in flight, so that the callers never append to the batch's.
			p.mu.Lock()
			batch := p.queue
			if len(batch) == 0 {
				p.mu.Unlock()
				break
			}
			if len(batch) > MaxPack {
				p.queue = append(p.spare[:0], batch[MaxPack:]...)
				batch = batch[:MaxPack]
			} else {
				p.queue = p.spare[:0]
			}
			p.spare = nil
			p.mu.Unlock()
			buf = buf[:0]
			for _, it := range batch {
				buf = appendPacked(buf, it.ev)
			}
			err := p.send(ctx, packReqSubj, "q-"+batch[0].id, buf)
			for i, it := range batch {
				if err != nil {
					p.forget(it.id)
					it.ch <- packOutcome{err: fmt.Errorf("bench: packed reference append: %w", err)}
				}
				batch[i] = packItem{}
			}
			p.mu.Lock()
			p.spare = batch[:0]
			p.mu.Unlock()
		}
	}
}

// send appends one packed message with message id id and awaits its
// acknowledgement.
func (p *Packed) send(ctx context.Context, subj, id string, data []byte) error {
	var f jetstream.PubAckFuture
	var err error
	for {
		f, err = p.js.PublishMsgAsync(&nats.Msg{Subject: subj, Data: data, Header: nats.Header{jetstream.MsgIDHeader: []string{id}}})
		if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		return err
	}
	select {
	case <-f.Ok():
		return nil
	case err := <-f.Err():
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// work runs every request of one packed message, appends their receipts as one
// packed message and acks the request message. A malformed message is
// terminated, nothing appended.
func (p *Packed) work(ctx context.Context, m jetstream.Msg, evs [][]byte) [][]byte {
	evs, err := unpack(evs, m.Data())
	if err != nil {
		m.Term()
		return evs
	}
	var out []byte
	var first string
	for i, ev := range evs {
		var req refRequest
		if err := json.Unmarshal(ev, &req); err != nil || req.ID == "" {
			m.Term()
			return evs
		}
		if i == 0 {
			first = req.ID
		}
		b, err := json.Marshal(refReceipt{ID: req.ID, Key: req.Key, OK: true, Result: req.Body, At: time.Now().UnixNano()})
		if err != nil {
			m.Nak()
			return evs
		}
		out = appendPacked(out, b)
	}
	// One receipt message per request message: its id is the first request's, so
	// a request message delivered again stores no second receipt message.
	if err := p.send(ctx, packRcptSubj, "r-"+first, out); err != nil {
		if ctx.Err() == nil {
			m.Nak()
		}
		return evs
	}
	m.Ack()
	return evs
}

// fold stores every receipt of one packed message with the checkpoint in one
// bbolt transaction and wakes their callers.
func (p *Packed) fold(m jetstream.Msg, evs [][]byte, rcs []refReceipt) ([][]byte, []refReceipt) {
	evs, err := unpack(evs, m.Data())
	if err != nil {
		return evs, rcs
	}
	md, err := m.Metadata()
	if err != nil {
		return evs, rcs
	}
	for _, ev := range evs {
		var rc refReceipt
		if err := json.Unmarshal(ev, &rc); err != nil || rc.ID == "" {
			return evs, rcs[:0]
		}
		rcs = append(rcs, rc)
	}
	err = p.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(refBucket)
		for i, ev := range evs {
			if err := b.Put([]byte(rcs[i].ID), ev); err != nil {
				return err
			}
		}
		return tx.Bucket(refMeta).Put(refSeqKey, strconv.AppendUint(nil, md.Sequence.Stream, 10))
	})
	if err != nil {
		return evs, rcs
	}
	p.folded.Add(uint64(len(rcs)))
	p.mu.Lock()
	for i := range rcs {
		ch := p.waiters[rcs[i].ID]
		delete(p.waiters, rcs[i].ID)
		if ch != nil {
			ch <- packOutcome{rc: rcs[i]}
		}
	}
	p.mu.Unlock()
	return evs, rcs
}

func (p *Packed) forget(id string) {
	p.mu.Lock()
	delete(p.waiters, id)
	p.mu.Unlock()
}

// Call invokes key with body through the packed pipeline and returns its receipt
// once folded.
func (p *Packed) Call(ctx context.Context, key, body string) (refReceipt, error) {
	id := p.pfx + strconv.FormatUint(p.ids.Add(1), 10)
	b, err := json.Marshal(refRequest{ID: id, Key: key, Body: body, At: time.Now().UnixNano()})
	if err != nil {
		return refReceipt{}, err
	}
	// Room for both outcomes: an append that failed late (no acknowledgement in
	// time) may still be stored, and its receipt folded.
	ch := make(chan packOutcome, 2)
	p.mu.Lock()
	p.waiters[id] = ch
	p.queue = append(p.queue, packItem{id: id, ev: b, ch: ch})
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
	select {
	case o := <-ch:
		return o.rc, o.err
	case <-ctx.Done():
		p.forget(id)
		return refReceipt{}, ctx.Err()
	}
}

// Invoke returns an Op that calls the echo function and checks the result.
func (p *Packed) Invoke() Op {
	return func(ctx context.Context, i int) error {
		rc, err := p.Call(ctx, EchoKey, EchoBody)
		if err != nil {
			return err
		}
		if !rc.OK || rc.Result != EchoBody {
			return fmt.Errorf("bench: packed reference call %d: ok=%v result %q", i, rc.OK, rc.Result)
		}
		return nil
	}
}

// Folded is how many receipts the follower has folded into bbolt.
func (p *Packed) Folded() uint64 { return p.folded.Load() }

// Stored counts the receipts in the bbolt file.
func (p *Packed) Stored() (int, error) {
	var n int
	err := p.db.View(func(tx *bolt.Tx) error { n = tx.Bucket(refBucket).Stats().KeyN; return nil })
	return n, err
}

// StreamMsgs is how many messages the packed pipeline's stream holds.
func (p *Packed) StreamMsgs(ctx context.Context) (uint64, error) {
	return streamMsgs(ctx, p.js, packStream)
}

// PackTally is what the packed pipeline's stream holds, read message by message.
type PackTally struct {
	RequestMsgs, Requests int
	ReceiptMsgs, Receipts int
	// Unanswered are the request ids with no receipt; Twice the ids with more
	// than one receipt.
	Unanswered, Twice []string
}

// Tally reads every message of the stream and counts its events by id.
func (p *Packed) Tally(ctx context.Context) (PackTally, error) {
	var t PackTally
	s, err := p.js.Stream(ctx, packStream)
	if err != nil {
		return t, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return t, err
	}
	reqs, rcpts := map[string]int{}, map[string]int{}
	var evs [][]byte
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			return t, fmt.Errorf("bench: packed stream message %d: %w", seq, err)
		}
		if evs, err = unpack(evs[:0], m.Data); err != nil {
			return t, fmt.Errorf("bench: packed stream message %d: %w", seq, err)
		}
		count := reqs
		if m.Subject == packRcptSubj {
			count = rcpts
			t.ReceiptMsgs++
			t.Receipts += len(evs)
		} else {
			t.RequestMsgs++
			t.Requests += len(evs)
		}
		for _, ev := range evs {
			var x struct{ ID string }
			if err := json.Unmarshal(ev, &x); err != nil {
				return t, fmt.Errorf("bench: packed stream message %d: %w", seq, err)
			}
			if count[x.ID]++; count[x.ID] == 2 && m.Subject == packRcptSubj {
				t.Twice = append(t.Twice, x.ID)
			}
		}
	}
	for id := range reqs {
		if rcpts[id] == 0 {
			t.Unanswered = append(t.Unanswered, id)
		}
	}
	return t, nil
}

// Close stops the pipeline, closes its file and deletes its stream.
func (p *Packed) Close() error {
	for _, stop := range p.stops {
		stop()
	}
	p.cancel()
	p.wg.Wait()
	err := p.db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if derr := p.js.DeleteStream(ctx, packStream); derr != nil && !errors.Is(derr, jetstream.ErrStreamNotFound) {
		err = errors.Join(err, derr)
	}
	return err
}

// streamMsgs is how many messages stream holds.
func streamMsgs(ctx context.Context, js jetstream.JetStream, stream string) (uint64, error) {
	msgs, _, err := streamState(ctx, js, stream)
	return msgs, err
}

// streamState is how many messages stream holds, and their bytes as the server
// counts them (each message's subject, headers, payload and framing).
func streamState(ctx context.Context, js jetstream.JetStream, stream string) (msgs, bytes uint64, err error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return 0, 0, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, 0, err
	}
	return info.State.Msgs, info.State.Bytes, nil
}

// StreamState is how many messages the packed pipeline's stream holds and their
// bytes.
func (p *Packed) StreamState(ctx context.Context) (msgs, bytes uint64, err error) {
	return streamState(ctx, p.js, packStream)
}

// StreamState is how many messages the reference's stream holds and their bytes.
func (r *Reference) StreamState(ctx context.Context) (msgs, bytes uint64, err error) {
	return streamState(ctx, r.js, refStream)
}
