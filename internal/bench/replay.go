package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/capdir/capdir/api"
	"github.com/capdir/capdir/eventlog/wire"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/projector"
)

// GenerateLog appends at least n events to l, the mix of a directory in use: one
// directory mutation (create, patch, now and then a delete) for every twelve
// invocations, each invocation a request and its receipt with realistic fields, a
// tenth of them on http rows and a few of those upstream 401s. Appends are
// asynchronous with up to window in flight, each event a message of its own (as
// capdir appends them one call at a time, and as its logs before packs hold
// them). It returns how many events it appended.
func GenerateLog(ctx context.Context, l *eventlog.Log, n int) (int, error) {
	return generate(ctx, &generator{l: l, window: genWindow}, n)
}

// GeneratePackedLog is GenerateLog with the requests and receipts marked
// eventlog.Packed and at most packedWindow appends in flight, so that the log
// packs them about as capdir does under load (packs of up to packedWindow
// events; at 64 calls in flight over HTTP, capdir's hold about ten).
func GeneratePackedLog(ctx context.Context, l *eventlog.Log, n int) (int, error) {
	return generate(ctx, &generator{l: l, window: packedWindow, packed: true}, n)
}

func generate(ctx context.Context, g *generator, n int) (int, error) {
	g.rng, g.at = rand.New(rand.NewPCG(1, 2)), time.Date(2026, 7, 26, 4, 0, 0, 0, time.UTC)
	for g.count < n {
		var err error
		if g.count%25 == 0 || len(g.keys) == 0 {
			err = g.mutate()
		} else {
			err = g.invoke()
		}
		if err != nil {
			return g.count, err
		}
	}
	return g.count, g.drain(ctx)
}

const (
	genWindow    = 2048
	packedWindow = 16
)

type generator struct {
	l        *eventlog.Log
	window   int  // appends in flight at most
	packed   bool // requests and receipts marked eventlog.Packed
	receipts []pendingReceipt
	rng      *rand.Rand
	at       time.Time
	keys     []string
	next     int
	count    int
	inflight []*eventlog.Pending
}

func (g *generator) append(ctx context.Context, subject, typ, actor string, data any) error {
	g.at = g.at.Add(time.Millisecond)
	ev, err := wire.NewEvent(g.at, typ, actor, data)
	if err != nil {
		return err
	}
	if len(g.inflight) >= g.window {
		if err := g.drain(ctx); err != nil {
			return err
		}
	}
	var f *eventlog.Pending
	if _, packable := wire.PackSubject(subject); g.packed && packable {
		f, err = g.l.AppendAsync(subject, ev, eventlog.Packed())
	} else {
		f, err = g.l.AppendAsync(subject, ev)
	}
	if err != nil {
		return err
	}
	g.inflight = append(g.inflight, f)
	g.count++
	return nil
}

// drain waits for the appends in flight, then appends the receipts whose
// requests they stored, until none is left.
func (g *generator) drain(ctx context.Context) error {
	for {
		var errs []error
		for _, f := range g.inflight {
			if _, err := eventlog.AwaitAck(ctx, f); err != nil {
				errs = append(errs, err)
			}
		}
		g.inflight = g.inflight[:0]
		if err := errors.Join(errs...); err != nil || len(g.receipts) == 0 {
			return err
		}
		rs := g.receipts
		g.receipts = nil
		for _, r := range rs {
			g.at = g.at.Add(time.Millisecond)
			ev, err := wire.NewEvent(g.at, wire.TypeReceipt, "engine:bench", r.rc)
			if err != nil {
				return err
			}
			f, err := g.l.AppendAsync(wire.ReceiptSubject(r.key), ev, eventlog.Packed())
			if err != nil {
				return err
			}
			g.inflight = append(g.inflight, f)
			g.count++
		}
	}
}

// pendingReceipt is a receipt a packed log's generator appends once its
// request is stored.
type pendingReceipt struct {
	key string
	rc  wire.Receipt
}

func (g *generator) row(key string) *contract.Row {
	at := contract.FormatTime(g.at)
	r := &contract.Row{Key: key, Type: contract.TypeFn, Target: "echo", Enabled: 1, PlannerVisible: 1, PlannerRank: 100,
		Content:   "# WHAT: " + strings.ToLower(strings.ReplaceAll(key, "_", " ")) + "\n# WHEN_TO_USE: benchmarks\n# ARGS: $1=text\n# EX: [" + key + "]hello[/" + key + "]",
		Category:  []string{"weather", "billing", "search", "ops"}[g.rng.IntN(4)],
		UpdatedAt: at, CreatedAt: at}
	if g.rng.IntN(10) == 0 {
		r.Type, r.Target, r.Auth = contract.TypeHTTP, "GET https://api.example.com/v1/"+strings.ToLower(key)+"?q=$1", "bearer:EXAMPLE_TOKEN"
	}
	return r
}

func (g *generator) mutate() error {
	ctx := context.Background()
	if len(g.keys) < 50 || g.rng.IntN(3) == 0 {
		key := fmt.Sprintf("%s_%s_%05d", []string{"WEATHER", "INVOICE", "SEARCH", "DEPLOY", "LOOKUP"}[g.next%5], []string{"GET", "LIST", "SYNC", "CHECK"}[g.next%4], g.next)
		g.next++
		g.keys = append(g.keys, key)
		return g.append(ctx, wire.DirectorySubject(key), wire.TypeDirectoryMutate, api.OwnerActor,
			contract.DirectoryMutation{Action: contract.ActionCreate, Key: key, Row: g.row(key)})
	}
	i := g.rng.IntN(len(g.keys))
	key := g.keys[i]
	if g.rng.IntN(10) == 0 {
		g.keys = append(g.keys[:i], g.keys[i+1:]...)
		return g.append(ctx, wire.DirectorySubject(key), wire.TypeDirectoryMutate, api.OwnerActor,
			contract.DirectoryMutation{Action: contract.ActionDelete, Key: key})
	}
	r := g.row(key)
	r.Category = "patched"
	return g.append(ctx, wire.DirectorySubject(key), wire.TypeDirectoryMutate, api.OwnerActor,
		contract.DirectoryMutation{Action: contract.ActionPatch, Key: key, Row: r})
}

func (g *generator) invoke() error {
	ctx := context.Background()
	key := g.keys[g.rng.IntN(len(g.keys))]
	inv := wire.NewInvocationID(g.at)
	trace := wire.NewTrace()
	body := fmt.Sprintf("%d.%02d|-122.%02d", 30+g.rng.IntN(20), g.rng.IntN(100), g.rng.IntN(100))
	req := wire.InvocationRequest{InvocationID: inv, Trace: trace, Key: key, Body: body, Credential: api.OwnerActor, DirSeq: uint64(g.count)}
	if err := g.append(ctx, wire.RequestSubject(key), wire.TypeInvocationRequested, req.Credential, req); err != nil {
		return err
	}
	started := g.at
	rc := wire.Receipt{
		ReceiptSummary: wire.ReceiptSummary{InvocationID: inv, Trace: trace, Actor: req.Credential, Key: key, Type: contract.TypeFn, Runner: "fn",
			OK: true, Ran: true, Material: true, Status: wire.StatusProvenMaterialResult, StartedAt: started, FinishedAt: started.Add(400 * time.Microsecond),
			DurationMS: 0.4, Fingerprints: wire.Fingerprints{Input: dispatcher.Fingerprint(body), Output: dispatcher.Fingerprint(body), Contract: dispatcher.Fingerprint(key)}},
		Body: body, Result: body, BreakerKind: "not_counted", Worker: "bench",
	}
	if g.rng.IntN(10) == 0 {
		rc.Type, rc.Runner, rc.Upstream, rc.BreakerKind, rc.CredTag = contract.TypeHTTP, "http", 200, "upstream_other", "tag_0123456789abcdef"
		rc.Result = `HTTP 200:{"temperature":18.5,"unit":"C"}`
		if g.rng.IntN(20) == 0 {
			rc.OK, rc.Material, rc.Upstream, rc.BreakerKind = false, false, 401, "auth_failure"
			rc.Status, rc.Result = wire.StatusRanWithError, `ERR:http:401:{"error":"unauthorized"}`
		}
	}
	if g.packed {
		// As a worker appends it: once its request is stored (drain).
		g.receipts = append(g.receipts, pendingReceipt{key: key, rc: rc})
		return nil
	}
	return g.append(ctx, wire.ReceiptSubject(key), wire.TypeReceipt, "engine:bench", rc)
}

// Replay generates a log of at least n events in dir and measures rebuilding a
// fresh bbolt projection from it; then the same for a log whose requests and
// receipts are packed as capdir packs them under load (GeneratePackedLog).
func Replay(ctx context.Context, dir, sync string, n int) ([]Result, error) {
	one, err := replayLog(ctx, filepath.Join(dir, "replay"), sync, n, false)
	if err != nil {
		return nil, err
	}
	packed, err := replayLog(ctx, filepath.Join(dir, "replay-packed"), sync, n, true)
	if err != nil {
		return nil, err
	}
	return append(one, packed...), nil
}

func replayLog(ctx context.Context, dir, sync string, n int, packed bool) ([]Result, error) {
	l, err := eventlog.Open(ctx, eventlog.Config{DataDir: dir, Sync: sync})
	if err != nil {
		return nil, err
	}
	defer l.Close()
	start := time.Now()
	generate, what, of := GenerateLog, "generate the log (AppendAsync, mixed events)", "the log"
	if packed {
		generate, what, of = GeneratePackedLog, "generate a packed log (AppendAsync, mixed events, requests and receipts packed)", "a packed log"
	}
	got, err := generate(ctx, l, n)
	if err != nil {
		return nil, fmt.Errorf("bench: generate log: %w", err)
	}
	gen := rateResult(ScenarioReplay, what, "events", got, time.Since(start), nil)
	path := filepath.Join(dir, "projection.db")
	// Warm-up: half a second of rebuilding, discarded.
	wctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	projector.Rebuild(wctx, projector.Config{Path: path, Log: l}, nil)
	cancel()
	os.Remove(path)
	cpu0 := CPUTime()
	el, err := MeasureRebuild(ctx, l, path)
	if err != nil {
		return nil, err
	}
	cpu := float64((CPUTime() - cpu0).Microseconds()) / float64(max(got, 1))
	r := rateResult(ScenarioReplay, "rebuild a fresh bbolt from "+of, "events", got, el, nil)
	// CPU per event, as BenchmarkReplay reports it: steadier than the rate on a
	// loaded machine.
	r.Note = fmt.Sprintf("%.1f µs CPU per event", cpu)
	r.Values = map[string]float64{"cpu_us_per_event": cpu}
	if last, err := l.LastSeq(ctx, wire.DataStream); err == nil && packed {
		r.Note += fmt.Sprintf(", %d messages", last)
	}
	if fi, err := os.Stat(path); err == nil {
		r.Note += fmt.Sprintf(", projection file %.0f MB", float64(fi.Size())/(1<<20))
	}
	return []Result{gen, r}, nil
}

// MeasureRebuild rebuilds path from l and returns how long it took.
func MeasureRebuild(ctx context.Context, l *eventlog.Log, path string) (time.Duration, error) {
	start := time.Now()
	if err := projector.Rebuild(ctx, projector.Config{Path: path, Log: l}, nil); err != nil {
		return 0, fmt.Errorf("bench: rebuild: %w", err)
	}
	return time.Since(start), nil
}
