package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capdir/capdir/dispatcher"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	bolt "go.etcd.io/bbolt"
)

// The reference pipeline's stream, subjects and consumer, on the node's own
// server beside the log (same store, same fsync policy).
const (
	refStream   = "BENCH_REF"
	refReqSubj  = "bench.ref.req"
	refRcptSubj = "bench.ref.rcpt"
	refWorkers  = "bench-ref-workers"
)

// refBucket is the bbolt bucket the follower folds receipts into; refMeta holds
// its checkpoint (the stream sequence of the last receipt folded).
var (
	refBucket = []byte("receipts")
	refMeta   = []byte("meta")
	refSeqKey = []byte("seq")
)

// refRequest and refReceipt are the reference pipeline's two events.
type refRequest struct {
	ID   string `json:"id"`
	Key  string `json:"key"`
	Body string `json:"body"`
	At   int64  `json:"at"`
}

type refReceipt struct {
	ID     string `json:"id"`
	Key    string `json:"key"`
	OK     bool   `json:"ok"`
	Result string `json:"result"`
	At     int64  `json:"at"`
}

// Reference is a pipeline of capdir's shape written the straightforward way with
// nothing but nats.go's jetstream package and bbolt: a caller appends a request
// event to a JetStream stream (async publish with a message id, awaiting its
// future); pull-consumer workers fetch it, run a trivial function (echo), append a
// receipt event (async publish, awaiting its future) and ack the request; a
// follower reads receipts with an ordered consumer, folds each into bbolt in its
// own Update with its checkpoint, and wakes the caller waiting for it. It has none
// of capdir's gate, contract, ledger, authentication or batching, and is the
// yardstick capdir's invocation rows are compared with (ScenarioReference).
type Reference struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	db   *bolt.DB
	ids  atomic.Uint64
	pfx  string
	http *http.Server
	url  string

	mu      sync.Mutex
	waiters map[string]chan refReceipt

	cancel context.CancelFunc
	wg     sync.WaitGroup
	stops  []func()
	folded atomic.Uint64
}

// StartReference starts the reference pipeline on nc's server with workers
// worker goroutines, its bbolt file in dir, and an HTTP handler (POST
// /api/dispatch {"key","body"}) on 127.0.0.1:0. Close stops it and deletes its
// stream.
func StartReference(ctx context.Context, nc *nats.Conn, dir string, workers int) (*Reference, error) {
	js, s, db, err := openPipelineStore(ctx, nc, dir, "reference", refStream, []string{refReqSubj, refRcptSubj}, "reference.db")
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancel(context.Background())
	r := &Reference{nc: nc, js: js, db: db, pfx: strconv.FormatInt(time.Now().UnixNano(), 36) + "-",
		waiters: map[string]chan refReceipt{}, cancel: cancel}
	// The workers' durable pull consumer.
	wc, err := s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: refWorkers, FilterSubject: refReqSubj, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: 30 * time.Second, MaxAckPending: 4 * workers,
	})
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("bench: reference workers' consumer: %w", err)
	}
	it, err := wc.Messages(jetstream.PullMaxMessages(2 * workers))
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("bench: reference workers' consumer: %w", err)
	}
	r.stops = append(r.stops, it.Stop)
	work := make(chan jetstream.Msg, workers)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
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
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			for m := range work {
				r.work(rctx, m)
			}
		}()
	}
	// The follower: an ordered consumer of the receipts.
	fc, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{refRcptSubj}})
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("bench: reference follower: %w", err)
	}
	fit, err := fc.Messages()
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("bench: reference follower: %w", err)
	}
	r.stops = append(r.stops, fit.Stop)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			m, err := fit.Next()
			if err != nil {
				return
			}
			r.fold(m)
		}
	}()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		r.Close()
		return nil, err
	}
	r.url = "http://" + ln.Addr().String()
	r.http = &http.Server{Handler: http.HandlerFunc(r.serveHTTP), ReadHeaderTimeout: 10 * time.Second}
	go r.http.Serve(ln)
	return r, nil
}

// work runs one request: decode, run the function, append the receipt, await its
// acknowledgement, ack the request.
func (r *Reference) work(ctx context.Context, m jetstream.Msg) {
	var req refRequest
	if err := json.Unmarshal(m.Data(), &req); err != nil {
		m.Term()
		return
	}
	rc := refReceipt{ID: req.ID, Key: req.Key, OK: true, Result: req.Body, At: time.Now().UnixNano()}
	b, err := json.Marshal(rc)
	if err != nil {
		m.Nak()
		return
	}
	f, err := r.js.PublishMsgAsync(&nats.Msg{Subject: refRcptSubj, Data: b, Header: nats.Header{jetstream.MsgIDHeader: []string{"r-" + req.ID}}})
	if err != nil {
		m.Nak()
		return
	}
	select {
	case <-f.Ok():
		m.Ack()
	case <-f.Err():
		m.Nak()
	case <-ctx.Done():
	}
}

// fold stores one receipt with the checkpoint in one bbolt transaction and wakes
// its caller.
func (r *Reference) fold(m jetstream.Msg) {
	var rc refReceipt
	if err := json.Unmarshal(m.Data(), &rc); err != nil {
		return
	}
	md, err := m.Metadata()
	if err != nil {
		return
	}
	err = r.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(refBucket).Put([]byte(rc.ID), m.Data()); err != nil {
			return err
		}
		return tx.Bucket(refMeta).Put(refSeqKey, strconv.AppendUint(nil, md.Sequence.Stream, 10))
	})
	if err != nil {
		return
	}
	r.folded.Add(1)
	r.mu.Lock()
	ch := r.waiters[rc.ID]
	delete(r.waiters, rc.ID)
	r.mu.Unlock()
	if ch != nil {
		ch <- rc
	}
}

// Call invokes key with body through the pipeline and returns its receipt once
// folded.
func (r *Reference) Call(ctx context.Context, key, body string) (refReceipt, error) {
	id := r.pfx + strconv.FormatUint(r.ids.Add(1), 10)
	b, err := json.Marshal(refRequest{ID: id, Key: key, Body: body, At: time.Now().UnixNano()})
	if err != nil {
		return refReceipt{}, err
	}
	ch := make(chan refReceipt, 1)
	r.mu.Lock()
	r.waiters[id] = ch
	r.mu.Unlock()
	forget := func() {
		r.mu.Lock()
		delete(r.waiters, id)
		r.mu.Unlock()
	}
	var f jetstream.PubAckFuture
	for {
		f, err = r.js.PublishMsgAsync(&nats.Msg{Subject: refReqSubj, Data: b, Header: nats.Header{jetstream.MsgIDHeader: []string{id}}})
		if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
			break
		}
		if ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		forget()
		return refReceipt{}, fmt.Errorf("bench: reference append: %w", err)
	}
	select {
	case <-f.Ok():
	case err := <-f.Err():
		forget()
		return refReceipt{}, fmt.Errorf("bench: reference append: %w", err)
	case <-ctx.Done():
		forget()
		return refReceipt{}, ctx.Err()
	}
	select {
	case rc := <-ch:
		return rc, nil
	case <-ctx.Done():
		forget()
		return refReceipt{}, ctx.Err()
	}
}

// serveHTTP is POST /api/dispatch {"key","body"} → {"ok","result"}.
func (r *Reference) serveHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var in struct{ Key, Body string }
	if err := json.NewDecoder(io.LimitReader(req.Body, 1<<20)).Decode(&in); err != nil {
		http.Error(w, "bad request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	rc, err := r.Call(req.Context(), in.Key, in.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"id": rc.ID, "ok": rc.OK, "result": rc.Result})
}

// Invoke returns an Op that calls the echo function directly (no HTTP) and checks
// the result.
func (r *Reference) Invoke() Op {
	return func(ctx context.Context, i int) error {
		rc, err := r.Call(ctx, EchoKey, EchoBody)
		if err != nil {
			return err
		}
		if !rc.OK || rc.Result != EchoBody {
			return fmt.Errorf("bench: reference call %d: ok=%v result %q", i, rc.OK, rc.Result)
		}
		return nil
	}
}

// RawHTTPInvoke returns an Op that calls the pipeline's HTTP handler with the lean
// keep-alive client RawHTTPInvoke uses for capdir, and a function that closes its
// connections.
func (r *Reference) RawHTTPInvoke() (Op, func(), error) {
	c, err := newRawClient(r.url, "/api/dispatch", "", dispatchBody(), 256)
	if err != nil {
		return nil, nil, err
	}
	return rawInvoke(c), c.close, nil
}

// Folded is how many receipts the follower has folded into bbolt.
func (r *Reference) Folded() uint64 { return r.folded.Load() }

// Stored counts the receipts in the bbolt file.
func (r *Reference) Stored() (int, error) {
	var n int
	err := r.db.View(func(tx *bolt.Tx) error { n = tx.Bucket(refBucket).Stats().KeyN; return nil })
	return n, err
}

// StreamMsgs is how many messages the pipeline's stream holds.
func (r *Reference) StreamMsgs(ctx context.Context) (uint64, error) {
	s, err := r.js.Stream(ctx, refStream)
	if err != nil {
		return 0, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.Msgs, nil
}

// Close stops the pipeline, closes its file and deletes its stream.
func (r *Reference) Close() error {
	if r.http != nil {
		r.http.Close()
	}
	for _, stop := range r.stops {
		stop()
	}
	r.cancel()
	r.wg.Wait()
	err := r.db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if derr := r.js.DeleteStream(ctx, refStream); derr != nil && !errors.Is(derr, jetstream.ErrStreamNotFound) {
		err = errors.Join(err, derr)
	}
	return err
}

// reference measures the reference pipeline (Reference, on the node's own server)
// against capdir at Parallel in flight, interleaved (Paired): over HTTP, both with
// the lean client, and then capdir's NATS call against the pipeline called
// directly. Each row carries its ratio to the floor; capdir's rows note capdir ÷
// the reference.
func (r *runner) reference(ctx context.Context, e *Env) error {
	nc, err := e.Node.Log().NewConn(nats.Name("capdir-bench-reference"))
	if err != nil {
		return fmt.Errorf("bench: reference connection: %w", err)
	}
	defer nc.Close()
	workers := r.cfg.Workers
	if workers <= 0 {
		workers = dispatcher.DefaultWorkers() // the node's own default
	}
	ref, err := StartReference(ctx, nc, r.dir, workers)
	if err != nil {
		return err
	}
	defer ref.Close()
	refHTTP, closeRef, err := ref.RawHTTPInvoke()
	if err != nil {
		return err
	}
	defer closeRef()
	in := ", " + strconv.Itoa(Parallel) + " in flight"
	pairs := []struct {
		capdirName, refName string
		capdir, ref         Op
	}{{"fn via POST /api/dispatch" + in + " (lean client)", "reference pipeline via HTTP" + in + " (lean client)", e.RawHTTPInvoke(), refHTTP}}
	if e.busSeed != "" {
		tok, err := e.MintToken(ctx, BusClient, time.Hour, EchoKey)
		if err != nil {
			return err
		}
		bus, err := e.ConnectBus(nats.Name("capdir-bench"))
		if err != nil {
			return fmt.Errorf("bench: connect bus client: %w", err)
		}
		defer bus.Close()
		pairs = append(pairs, struct {
			capdirName, refName string
			capdir, ref         Op
		}{"fn via a NATS call (request-reply)" + in, "reference pipeline, direct caller" + in, NATSCall(bus, tok), ref.Invoke()})
	}
	for _, p := range pairs {
		got, base, err := Paired(ctx, ScenarioReference, p.capdirName, p.refName, p.capdir, p.ref, r.c.invokePar, Parallel, r.c.budget)
		if err != nil {
			return err
		}
		got.noteRatio(base, "the reference pipeline", "reference_ratio")
		r.add(got, base)
	}
	return r.packedRow(ctx, e, ref, workers)
}

// URL is the base URL of the pipeline's HTTP handler.
func (r *Reference) URL() string { return r.url }

// openPipelineStore makes the stream (deleting one an earlier run left) and the
// bbolt file, with its buckets, that a bench pipeline of reference's shape runs
// on; what names the pipeline in errors.
func openPipelineStore(ctx context.Context, nc *nats.Conn, dir, what, stream string, subjects []string, file string) (jetstream.JetStream, jetstream.Stream, *bolt.DB, error) {
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("bench: %s: %w", what, err)
	}
	_ = js.DeleteStream(ctx, stream) // a stream left by an earlier run
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: stream, Subjects: subjects, Storage: jetstream.FileStorage,
		Duplicates: 2 * time.Minute,
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("bench: %s stream: %w", what, err)
	}
	db, err := bolt.Open(filepath.Join(dir, file), 0o600, &bolt.Options{Timeout: 5 * time.Second, NoSync: true, NoGrowSync: true, NoFreelistSync: true})
	if err != nil {
		js.DeleteStream(context.Background(), stream)
		return nil, nil, nil, fmt.Errorf("bench: %s projection: %w", what, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{refBucket, refMeta} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		js.DeleteStream(context.Background(), stream)
		return nil, nil, nil, fmt.Errorf("bench: %s projection: %w", what, err)
	}
	return js, s, db, nil
}
