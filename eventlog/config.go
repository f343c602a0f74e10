package eventlog

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"
)

// SyncAlways is the Sync value that fsyncs every append before it is acknowledged.
const SyncAlways = "always"

// Config configures Open.
type Config struct {
	// DataDir holds the embedded server's store (DataDir/nats). Required when NATSURL is empty.
	DataDir string
	// NATSURL connects to an existing NATS cluster instead of starting an embedded server.
	NATSURL string
	// Listen, when set, makes the embedded server accept TCP clients on this host:port.
	// They must authenticate: the server admits the bus identities recorded in
	// DataDir (see AddBusClient), each with its role's permissions, and capdir's own
	// connection with a key generated at start. Empty means in-process connections
	// only, without authentication.
	Listen string
	// Creds is the credential file capdir's connection presents to NATSURL: a .creds
	// file (user JWT and seed) or an nkey seed file (as capdir bus add-client --role
	// node writes it), readable by its owner only. Empty connects without one (or
	// with what NATSURL carries, nats://user:password@host).
	Creds string
	// Replicas is the stream replica count (1 for the embedded server; 3 on a cluster).
	Replicas int
	// Existing opens the streams as they are, without creating or updating them
	// (Replicas, DataMaxAge, DataMaxBytes and DuplicateWindow are then not applied): for a tool
	// working on a node's log, which must not change what the node set. A stream
	// missing is an error naming it.
	Existing bool
	// Sync is the embedded store's fsync policy: "always" or a Go duration ("1s", "2m").
	Sync string
	// DataMaxAge bounds how long invocation requests and receipts stay in the log; 0 keeps them forever.
	DataMaxAge time.Duration
	// DataMaxBytes bounds the bytes the data stream holds: past it, the oldest
	// requests and receipts leave the log first; 0 sets no bound.
	DataMaxBytes int64
	// Compression is how the streams' file store compresses its blocks:
	// CompressionS2 (the default when empty) or CompressionNone. A block is
	// compressed when it is full, so the block being written is not. Changing it
	// on a log that exists updates its streams' configuration; a server applies
	// the stored setting when it opens the stream, so the embedded server writes
	// with the new setting from the start after, and blocks already written stay
	// as they are.
	Compression string
	// DuplicateWindow is how long a retried append with the same event id is deduplicated.
	DuplicateWindow time.Duration
	// StartTimeout bounds how long Open waits for JetStream to answer.
	StartTimeout time.Duration
	// AckTimeout bounds how long an AppendAsync waits for the stream's
	// acknowledgement: then its future fails with an error matching ErrAckTimeout
	// (DefaultAckTimeout when 0). An acknowledgement can be lost for good when the
	// server or stream leader that took the message goes away; the message may or
	// may not be stored. Unbounded, such an append would stay pending for the
	// connection's life, holding one of its 4096 slots for appends in flight and
	// keeping Close waiting.
	AckTimeout time.Duration
	// ElectionWait bounds how long an append that no server answers for its
	// stream (the stream has no leader: an election after a server went away) is
	// sent again, every quarter of a second, before it is refused with an error
	// matching ErrElecting (DefaultElectionWait when 0). Sending it again is safe:
	// with no answer nothing was stored, and an event's id is its Nats-Msg-Id.
	ElectionWait time.Duration
	// GroupCommit is whether the async appends to the data stream (the
	// requests, the receipts) that arrive while one is in flight are sent
	// together as one JetStream atomic batch, with one acknowledgement for the
	// batch: GroupCommitAuto (the default when empty) turns it on where it was
	// measured to pay, the embedded server with Sync "always" (one fsync per
	// batch instead of one per append); GroupCommitOn and GroupCommitOff force
	// it. When on, the data stream is created or updated to allow atomic
	// batches; when off, to refuse them. Each append still gets its own
	// outcome: a batch refused whole (an append's event id already stored, a
	// limit of the stream's) is sent again one append at a time.
	GroupCommit string
	// Pack is whether capdir's own requests and receipts appended at about the
	// same time may share one message of the data stream (a pack: see Packed):
	// PackAuto (the default when empty) packs on a log no other node shares (the
	// embedded server without node identities), since every node that consumes
	// the log must read packs; PackOn packs on any log (set it once every node
	// of a cluster runs a version that reads them); PackOff never packs. Logs
	// hold packs and single events side by side: the setting changes what is
	// appended next, never what is stored.
	Pack string
	// Clock stamps new events; time.Now when nil.
	Clock func() time.Time
	// Logger receives the embedded NATS server's notices, warnings and errors
	// (component=nats-server); slog.Default when nil.
	Logger *slog.Logger
	// Metrics counts appends (see NewMetrics); a private, unregistered set when nil.
	Metrics *Metrics
}

func (c *Config) setDefaults() {
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.Sync == "" {
		c.Sync = DefaultSync
	}
	if c.Compression == "" {
		c.Compression = CompressionS2
	}
	if c.DuplicateWindow == 0 {
		c.DuplicateWindow = 2 * time.Minute
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = 30 * time.Second
	}
	if c.AckTimeout == 0 {
		c.AckTimeout = DefaultAckTimeout
	}
	if c.ElectionWait == 0 {
		c.ElectionWait = DefaultElectionWait
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics, _ = NewMetrics(nil) // registers nothing, so it cannot fail
	}
}

// Config.GroupCommit's values.
const (
	GroupCommitAuto = "auto"
	GroupCommitOn   = "on"
	GroupCommitOff  = "off"
)

// groupCommit reports whether c asks for group commit (Config.GroupCommit).
func (c *Config) groupCommit() bool {
	switch c.GroupCommit {
	case GroupCommitOn:
		return true
	case GroupCommitOff:
		return false
	}
	always, _, _ := c.syncPolicy()
	return c.NATSURL == "" && always
}

// Config.Pack's values.
const (
	PackAuto = "auto"
	PackOn   = "on"
	PackOff  = "off"
)

// pack reports whether c asks for packs (Config.Pack) on a log that other nodes
// share or not.
func (c *Config) pack(otherNodes bool) bool {
	switch c.Pack {
	case PackOn:
		return true
	case PackOff:
		return false
	}
	return !otherNodes
}

// DefaultAckTimeout is Config.AckTimeout's default: as long as the dispatcher
// waits for a receipt's acknowledgement and the facade for a write's.
const DefaultAckTimeout = 10 * time.Second

// DefaultElectionWait is Config.ElectionWait's default: longer than a
// three-server cluster's elections were measured to take (4 to 9 s).
const DefaultElectionWait = 10 * time.Second

// Config.Compression's values.
const (
	// CompressionS2 compresses each full block of the streams' file store with S2.
	CompressionS2 = "s2"
	// CompressionNone stores blocks as they are written.
	CompressionNone = "none"
)

// DefaultSync is the default fsync interval of the embedded store; see the README for
// the measurements behind it.
const DefaultSync = "1s"

// Validate reports every problem with the configuration at once.
func (c *Config) Validate() error {
	var errs []error
	if c.NATSURL == "" && c.DataDir == "" {
		errs = append(errs, errors.New("eventlog: a data dir is required for the embedded server (set --data)"))
	}
	if c.Replicas < 1 || c.Replicas > 5 {
		errs = append(errs, fmt.Errorf("eventlog: replicas must be 1..5, got %d", c.Replicas))
	}
	if c.NATSURL == "" && c.Replicas != 1 {
		errs = append(errs, errors.New("eventlog: the embedded server is a single node: replicas must be 1 (use --nats-url for a cluster)"))
	}
	if _, _, err := c.syncPolicy(); err != nil {
		errs = append(errs, err)
	}
	if c.Creds != "" && c.NATSURL == "" {
		errs = append(errs, errors.New("eventlog: a credential file (--nats-creds) is for connecting to --nats-url; the embedded server needs none"))
	}
	if c.Listen != "" && c.NATSURL != "" {
		errs = append(errs, errors.New("eventlog: --nats-listen is for the embedded server; with --nats-url, clients connect to the cluster"))
	}
	if c.AckTimeout < 0 {
		errs = append(errs, errors.New("eventlog: the acknowledgement timeout must not be negative"))
	}
	if c.ElectionWait < 0 {
		errs = append(errs, errors.New("eventlog: the election wait must not be negative"))
	}
	if c.DataMaxAge < 0 {
		errs = append(errs, errors.New("eventlog: data retention must not be negative"))
	}
	if c.DataMaxBytes < 0 {
		errs = append(errs, fmt.Errorf("eventlog: --data-max-bytes must be 0 (no bound) or a number of bytes, got %d", c.DataMaxBytes))
	}
	switch c.Pack {
	case "", PackAuto, PackOn, PackOff:
	default:
		errs = append(errs, fmt.Errorf("eventlog: --log-pack must be %q, %q or %q, got %q", PackAuto, PackOn, PackOff, c.Pack))
	}
	switch c.GroupCommit {
	case "", GroupCommitAuto, GroupCommitOn, GroupCommitOff:
	default:
		errs = append(errs, fmt.Errorf("eventlog: --log-group-commit must be %q, %q or %q, got %q", GroupCommitAuto, GroupCommitOn, GroupCommitOff, c.GroupCommit))
	}
	if c.Compression != "" && c.Compression != CompressionS2 && c.Compression != CompressionNone {
		errs = append(errs, fmt.Errorf("eventlog: --log-compression must be %q or %q, got %q", CompressionS2, CompressionNone, c.Compression))
	}
	return errors.Join(errs...)
}

// ValidateSet reports every problem with the settings c holds, the ones left
// zero taking their defaults (as Open gives them): for a caller that checks its
// configuration before anything is created.
func (c Config) ValidateSet() error {
	c.setDefaults()
	return c.Validate()
}

// syncPolicy parses Sync into the embedded server's options.
func (c *Config) syncPolicy() (always bool, interval time.Duration, err error) {
	if strings.EqualFold(c.Sync, SyncAlways) {
		return true, 0, nil
	}
	d, err := time.ParseDuration(c.Sync)
	if err != nil || d <= 0 {
		return false, 0, fmt.Errorf("eventlog: --sync must be %q or a positive duration such as 1s, got %q", SyncAlways, c.Sync)
	}
	return false, d, nil
}

func (c *Config) storeDir() string { return StoreDir(c.DataDir) }

// StoreDir is where the embedded server keeps the log of a data dir.
func StoreDir(dataDir string) string { return filepath.Join(dataDir, "nats") }
