package bench

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/capdir/capdir/eventlog"
)

// Scenario names, in the order Run runs them.
const (
	ScenarioFloor = "floor"
	ScenarioNATS  = "nats"
	ScenarioHTTP  = "http"
	ScenarioMCP   = "mcp"
	// ScenarioReference: a hand-tuned pipeline of capdir's shape (Reference)
	// against capdir's invocation rows, interleaved.
	ScenarioReference = "reference"
	ScenarioHTTPRow   = "httprow"
	// ScenarioMCPUpstream: a row of runner mcp through capdir's /mcp against
	// its upstream called directly.
	ScenarioMCPUpstream = "mcp-upstream"
	ScenarioFlow        = "flow"
	// ScenarioTracing: fn over HTTP on a node with tracing off against one
	// tracing every call, interleaved.
	ScenarioTracing   = "tracing"
	ScenarioReplay    = "replay"
	ScenarioDirectory = "directory"
)

// ScenarioInfo is one scenario as help text names it.
type ScenarioInfo struct {
	Name     string
	Measures string // what it measures, one line or more (joined with "\n")
}

// ScenarioTable is every scenario in run order, with what it measures: the one
// list the command's help and Scenarios are made of.
var ScenarioTable = []ScenarioInfo{
	{ScenarioFloor, "JetStream async and sync publish of a real request event's size"},
	{ScenarioNATS, "fn invocations through the NATS request subject, then as one NATS request-reply\n" +
		"to the call subject, 1 and 64 in flight"},
	{ScenarioHTTP, "the same through POST /api/dispatch over loopback HTTP (Go's client;\n" +
		"at 64 in flight also a lean keep-alive client, as a load tool would be)"},
	{ScenarioMCP, "the same through MCP tools/call (the Go SDK's client over streamable HTTP, then\n" +
		"a lean keep-alive client, then the SDK's over 8 sessions), interleaved with\n" +
		"POST /api/dispatch by the same kind of client"},
	{ScenarioReference, "a hand-tuned pipeline of the same shape (JetStream request, pull worker, receipt,\n" +
		"bbolt fold; nothing else) against fn over HTTP (lean client) and a NATS call, 64 in flight, interleaved;\n" +
		"then the same pipeline with several events packed in one message against it"},
	{ScenarioHTTPRow, "an http row against a local upstream, against calling it directly"},
	{ScenarioMCPUpstream, "tools/call through capdir's /mcp to an upstream MCP server (the Go SDK's, in process),\n" +
		"against that server called directly"},
	{ScenarioFlow, "a three-step fn flow against one fn call of its step row"},
	{ScenarioTracing, "fn over POST /api/dispatch with tracing off against tracing on (the OpenTelemetry SDK,\n" +
		"a batch span processor, spans dropped), interleaved, 1 and 64 in flight; allocations per call"},
	{ScenarioReplay, "rebuilding a fresh bbolt file from a generated log"},
	{ScenarioDirectory, "importing generated rows; lookups, did_you_mean and resident memory"},
}

// Scenarios lists every scenario name in run order.
var Scenarios = func() []string {
	names := make([]string, len(ScenarioTable))
	for i, s := range ScenarioTable {
		names[i] = s.Name
	}
	return names
}()

// Config configures Run.
type Config struct {
	// Quick uses smaller counts so that a whole run takes under a minute.
	Quick bool
	// Sync is the log's fsync policy ("always" or an interval); eventlog.DefaultSync when empty.
	Sync string
	// Workers is the node's dispatcher workers; the node's default when 0.
	Workers int
	// Only restricts the run to these scenarios (see Scenarios); all when empty.
	Only []string
	// Dir is where the temporary data directories are made; os.TempDir when empty.
	Dir string
	// Progress receives one line as each scenario starts; discarded when nil.
	Progress io.Writer
	// Logger receives the node's own logs; discarded when nil.
	Logger *slog.Logger
}

func (c *Config) setDefaults() {
	if c.Sync == "" {
		c.Sync = eventlog.DefaultSync
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var errs []error
	for _, s := range c.Only {
		if !slices.Contains(Scenarios, s) {
			errs = append(errs, fmt.Errorf("bench: unknown scenario %q (one of %s)", s, strings.Join(Scenarios, ", ")))
		}
	}
	if c.Sync != "" {
		cfg := eventlog.Config{DataDir: "x", Replicas: 1, Sync: c.Sync}
		if err := cfg.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (c *Config) wants(name string) bool { return len(c.Only) == 0 || slices.Contains(c.Only, name) }

// ReplayEvents is the size of the log a full run's replay scenario rebuilds, and
// BenchmarkReplay's: the two measure the same rebuild of the same log.
const ReplayEvents = 100_000

// counts are the sizes of one run.
type counts struct {
	floorAsync, floorSync int
	invokeSeq, invokePar  int
	httpRow               int
	flowSeq, flowPar      int // fn invocations; the flows measured are a third as many
	replayEvents          int
	directoryRows         int
	lookups               int
	budget                time.Duration // a cap on one measured loop
}

func (c *Config) counts() counts {
	if c.Quick {
		return counts{floorAsync: 50_000, floorSync: 3_000, invokeSeq: 1_000, invokePar: 8_000, httpRow: 500,
			flowSeq: 600, flowPar: 6_000, replayEvents: 60_000, directoryRows: 20_000, lookups: 300, budget: 4 * time.Second}
	}
	return counts{floorAsync: 200_000, floorSync: 20_000, invokeSeq: 5_000, invokePar: 50_000, httpRow: 3_000,
		flowSeq: 3_000, flowPar: 30_000, replayEvents: ReplayEvents, directoryRows: 100_000, lookups: 2_000, budget: 20 * time.Second}
}
