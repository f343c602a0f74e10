package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/api"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/projector"
	"github.com/capdir/capdir/projector/ledger"
	"github.com/spf13/cobra"
	"golang.org/x/mod/sumdb/note"
)

func init() { register(verifyCmd) }

// verifyConfig is what capdir verify checks.
type verifyConfig struct {
	DataDir    string
	Keys       string // the public keys file (required)
	Checkpoint string // the signed checkpoint; ledger.CheckpointPath(DataDir) when empty
	Receipt    string // a public receipt (GET /receipt/{id}) to check alone
	Projection string // a copy of a projection file to check, with Checkpoint, instead of DataDir
	Invocation string // one receipt of the data dir, by invocation id
	From, To   int64  // a range of leaf indexes, [From, To); To < 0: to the checkpoint's size
	Log        eventlog.Config
	Out        io.Writer
}

func verifyCmd() *cobra.Command {
	var cfg verifyConfig
	cmd := &cobra.Command{
		Use:   "verify --keys FILE [--receipt FILE | [--data DIR | --projection FILE --checkpoint FILE] [--invocation ID | --from N --to M]]",
		Short: "Check receipts against a signed checkpoint of the receipt ledger, offline, from the public key alone",
		Long: "Check receipts against a signed checkpoint of the receipt ledger, from the public keys alone\n" +
			"(--keys: the JSON of GET /.well-known/capdir-keys, or note verifier keys one a line).\n\n" +
			"With --receipt FILE it checks a public receipt (GET /receipt/{id}): its signed checkpoint and\n" +
			"its inclusion proof. With --data DIR it checks the data dir's receipts (all, one with\n" +
			"--invocation, or the leaves from --from to --to) against the checkpoint the node signed last\n" +
			"(or --checkpoint FILE): the log's copy, the projection's copy and the projection's stored tree,\n" +
			"and names the first receipt that does not verify. Stop capdir serve on the data dir first.\n" +
			"With --projection FILE and --checkpoint FILE it checks a copy of a projection file (a backup)\n" +
			"the same way, without a log.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Out = cmd.OutOrStdout()
			return runVerify(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Keys, "keys", "", "the public keys: a file holding GET /.well-known/capdir-keys, or note verifier keys one a line (required)")
	f.StringVar(&cfg.Receipt, "receipt", "", "check this public receipt (the JSON of GET /receipt/{id}) alone")
	f.StringVar(&cfg.DataDir, "data", defaultDataDir(), "data directory ($CAPDIR_DATA)")
	f.StringVar(&cfg.Checkpoint, "checkpoint", "", "the signed checkpoint to check against (default: the one the node signed last, in DATA/ledger/checkpoint)")
	f.StringVar(&cfg.Projection, "projection", "", "check this copy of a projection file (a backup of DATA/projection.db) against --checkpoint, without a log or a data dir")
	f.StringVar(&cfg.Invocation, "invocation", "", "check only the receipt of this invocation id")
	f.Int64Var(&cfg.From, "from", 0, "check the leaves from this index")
	f.Int64Var(&cfg.To, "to", -1, "check the leaves before this index (default: to the checkpoint's size)")
	clusterFlags(cmd, &cfg.Log, "read the log from an existing NATS cluster (the node's own --nats-url)")
	cmd.MarkFlagRequired("keys")
	return cmd
}

// runVerify checks what cfg names and prints what verified to cfg.Out; the first
// receipt that does not verify is its error (a *ledger.Failure).
func runVerify(ctx context.Context, cfg verifyConfig) error {
	b, err := readVerifyFile(cfg.Keys)
	if err != nil {
		return fmt.Errorf("verify: --keys: %w", err)
	}
	keys, err := ledger.ParseKeys(b)
	if err != nil {
		return err
	}
	if cfg.Receipt != "" {
		return verifyPublicReceipt(cfg, keys)
	}
	if cfg.From < 0 || cfg.To >= 0 && cfg.To < cfg.From {
		return fmt.Errorf("verify: --from (%d) must be 0 or more and --to (%d) not below it", cfg.From, cfg.To)
	}
	if cfg.Projection != "" {
		if cfg.Checkpoint == "" {
			return errors.New("verify: --projection needs --checkpoint FILE: the signed checkpoint to check the copy against")
		}
		cp, err := openCheckpoint(cfg, keys)
		if err != nil {
			return err
		}
		return verifyCopies(cfg, cp, nil)
	}
	lock, err := capdir.LockDataDir(cfg.DataDir)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	cp, err := openCheckpoint(cfg, keys)
	if err != nil {
		return err
	}
	logCopy, err := copyOfLog(ctx, cfg)
	if err != nil {
		return err
	}
	return verifyCopies(cfg, cp, logCopy)
}

func verifyPublicReceipt(cfg verifyConfig, keys note.Verifiers) error {
	b, err := readVerifyFile(cfg.Receipt)
	if err != nil {
		return fmt.Errorf("verify: --receipt: %w", err)
	}
	var pub api.PublicReceipt
	if err := json.Unmarshal(b, &pub); err != nil || pub.InvocationID == "" {
		return fmt.Errorf("verify: %s is not a public receipt (the JSON of GET /receipt/{id})", cfg.Receipt)
	}
	if pub.Ledger == nil {
		return fmt.Errorf("verify: receipt %s carries no ledger proof (its node keeps no ledger)", pub.InvocationID)
	}
	cp, err := pub.Ledger.Verify(keys)
	if err != nil {
		return fmt.Errorf("receipt %s does not verify: %w", pub.InvocationID, err)
	}
	fmt.Fprintf(cfg.Out, "receipt %s: leaf %d (hash %s) is in the signed tree of %d receipts of %s\n",
		pub.InvocationID, pub.Ledger.LeafIndex, pub.Ledger.LeafHash, cp.Size, cp.Origin)
	return nil
}

// openCheckpoint opens the signed checkpoint (cfg.Checkpoint, else the one the
// data dir's node signed last) with keys.
func openCheckpoint(cfg verifyConfig, keys note.Verifiers) (ledger.Checkpoint, error) {
	cpPath := cfg.Checkpoint
	if cpPath == "" {
		cpPath = ledger.CheckpointPath(cfg.DataDir)
	}
	b, err := readVerifyFile(cpPath)
	if err != nil {
		return ledger.Checkpoint{}, fmt.Errorf("verify: the signed checkpoint: %w (a node signs one as it starts; or give --checkpoint FILE)", err)
	}
	return ledger.OpenCheckpoint(b, keys)
}

// maxVerifyFile bounds a keys file, a public receipt and a checkpoint: each is a
// few kilobytes, and whoever handed one over may have made it huge.
const maxVerifyFile = 1 << 20

// readVerifyFile reads path, refusing one over maxVerifyFile bytes unread.
func readVerifyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxVerifyFile+1))
	if err == nil && len(b) > maxVerifyFile {
		err = fmt.Errorf("%s is over %d bytes, more than a keys file, a public receipt or a checkpoint holds: give the file itself", path, maxVerifyFile)
	}
	return b, err
}

// verifyCopies checks the projection (cfg.Projection, else the data dir's) and
// the log's copy when there is one against cp.
func verifyCopies(cfg verifyConfig, cp ledger.Checkpoint, logCopy *ledger.Copy) error {
	var copies []ledger.Copy
	if logCopy != nil {
		copies = append(copies, *logCopy)
	}
	path := cfg.Projection
	if path == "" {
		path = capdir.ProjectionPath(cfg.DataDir)
	}
	receipts, tree, err := copiesOfFile(path, "the projection")
	if err != nil {
		return err
	}
	copies = append(copies, receipts, tree)
	from, to := cfg.From, cfg.To
	if cfg.Invocation != "" {
		if from, err = leafOf(cfg.Invocation, copies); err != nil {
			return err
		}
		to = from + 1
	}
	if err := checkCovered(cfg, cp, from); err != nil {
		return err
	}
	rep, err := ledger.Check(cp, from, to, copies...)
	if err != nil {
		return err
	}
	fmt.Fprintf(cfg.Out, "verified %d receipts against the checkpoint of %d receipts of %s (copies: %d; %s has its root)\n",
		rep.Checked, cp.Size, cp.Origin, len(copies), rep.Trusted)
	if rep.Uncovered > 0 {
		fmt.Fprintf(cfg.Out, "%d receipts after it are in no checkpoint yet\n", rep.Uncovered)
	}
	return nil
}

// checkCovered refuses a receipt (--invocation) or a range (--from) that begins
// past cp's tree: no leaf of it is in the checkpoint, so none can verify, and
// "verified 0 receipts" would pass for a check.
func checkCovered(cfg verifyConfig, cp ledger.Checkpoint, from int64) error {
	const how = "sign a newer one (POST /api/ledger/checkpoint, or start the node, which signs one as it starts) and verify against it"
	switch {
	case from < cp.Size:
		return nil
	case cfg.Invocation != "":
		return fmt.Errorf("verify: receipt %s (leaf %d) is in no checkpoint yet: the checkpoint holds %d receipts; %s", cfg.Invocation, from, cp.Size, how)
	case cfg.From > 0:
		return fmt.Errorf("verify: --from %d is past the checkpoint, which holds %d receipts: none of them is in it yet; %s", from, cp.Size, how)
	}
	return nil
}

func leafOf(inv string, copies []ledger.Copy) (int64, error) {
	for _, c := range copies {
		for i, id := range c.IDs {
			if id == inv {
				return int64(i), nil
			}
		}
	}
	return 0, fmt.Errorf("verify: no receipt of invocation %s is in the ledger", inv)
}

func copiesOfFile(path, name string) (receipts, tree ledger.Copy, err error) {
	f, err := projector.OpenLedgerFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return receipts, tree, fmt.Errorf("%w (no %s)", capdir.ErrNoProjection, path)
	}
	if err != nil {
		return receipts, tree, err
	}
	defer f.Close()
	return ledger.Copies(f, name)
}

// copyOfLog folds the data dir's log (or the cluster's, with --nats-url) into a
// fresh projection beside it and reads its receipts' leaves: the log's copy. nil
// when the data dir keeps no log and no cluster is named.
func copyOfLog(ctx context.Context, cfg verifyConfig) (*ledger.Copy, error) {
	if cfg.Log.NATSURL == "" {
		if fi, err := os.Stat(eventlog.StoreDir(cfg.DataDir)); err != nil || !fi.IsDir() {
			return nil, nil
		}
	}
	lc := cfg.Log
	lc.DataDir, lc.Existing = cfg.DataDir, true
	l, err := eventlog.Open(ctx, lc)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	tmp, err := os.MkdirTemp(cfg.DataDir, "verify-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	path := filepath.Join(tmp, "log.db")
	if err := projector.Rebuild(ctx, projector.Config{Path: path, Log: l}, nil); err != nil {
		return nil, err
	}
	receipts, _, err := copiesOfFile(path, "the log")
	return &receipts, err
}
