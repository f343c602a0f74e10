package projector

import (
	"context"
	"fmt"
	"os"
)

// Progress reports replay progress: the stream, the last applied sequence and the
// stream's last sequence when the replay started.
type Progress func(stream string, seq, last uint64)

// RebuildBatchSize is Rebuild's default Config.BatchSize: nobody waits on a
// rebuild's individual commits, so it commits in large transactions.
const RebuildBatchSize = 8192

// Rebuild folds the whole log from sequence 1 into a fresh file beside cfg.Path and,
// once it has caught up, renames it over cfg.Path: the old projection stays in place
// until the new one is complete. When ctx ends first, or the fold fails, it
// returns the error, removes the new file and leaves cfg.Path as it was. No
// projector may have cfg.Path open meanwhile.
func Rebuild(ctx context.Context, cfg Config, progress Progress) error {
	final := cfg.Path
	tmp := final + ".rebuild"
	if err := os.Remove(tmp); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("projector: %w", err)
	}
	os.Remove(dirtyMarker(tmp))
	cfg.Path = tmp
	// The new file is swapped in only once complete and fsynced (Close): a crash
	// before leaves the old projection in place and a partial new file that the
	// next Rebuild removes and starts again from sequence 1. So its batches commit
	// without fsync, whatever cfg.Sync says.
	cfg.Sync = false
	cfg.rebuild = true
	if cfg.BatchSize == 0 {
		cfg.BatchSize = RebuildBatchSize
	}
	p, err := Open(cfg)
	if err != nil {
		return err
	}
	if err := p.CatchUp(ctx, progress); err != nil {
		// Stopped or failed: the projection at final stays as it was, and the
		// partial new file goes, neither written out nor sealed.
		p.abandon()
		os.Remove(tmp)
		os.Remove(sealPath(tmp))
		os.Remove(dirtyMarker(tmp))
		return err
	}
	// Close fsyncs the file; then the rename is the atomic swap.
	if err := p.Close(); err != nil {
		return err
	}
	return swapIn(tmp, final)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
