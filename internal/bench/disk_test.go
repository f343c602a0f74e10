package bench

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/projector"
	bolt "go.etcd.io/bbolt"
)

// boltPages is the bytes of the pages a bbolt file holds data in (its high-water
// mark less its free pages) and the file's size. The file is opened for writing,
// without syncing its freelist, so that bbolt counts the free pages (it does not
// when the file is opened read-only and its freelist was not synced); nothing is
// written to it.
func boltPages(t *testing.T, path string) (inUse, size int64) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoFreelistSync: true, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		inUse = tx.Size() - int64(db.Stats().FreePageN)*int64(db.Info().PageSize)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return inUse, fi.Size()
}

// dirSize is the bytes of the files under dir.
func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The disk one invocation costs, with the streams compressed and without: set
// CAPDIR_BENCH_DISK to the number of fn invocations to make (64 in flight over
// POST /api/dispatch, or CAPDIR_BENCH_DISK_PARALLEL); the log's store and the
// whole data dir (the projection included) are measured once the node has
// stopped, and logged per invocation, and the data dir again once its
// projection is compacted (projector.Compact).
func TestDiskPerInvocation(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CAPDIR_BENCH_DISK"))
	if n <= 0 {
		t.Skip("set CAPDIR_BENCH_DISK to a number of invocations")
	}
	parallel := Parallel
	if p := os.Getenv("CAPDIR_BENCH_DISK_PARALLEL"); p != "" {
		var err error
		if parallel, err = strconv.Atoi(p); err != nil || parallel < 1 {
			t.Fatalf("CAPDIR_BENCH_DISK_PARALLEL=%q: want a number of invocations in flight, 1 or more", p)
		}
	}
	for _, c := range []string{eventlog.CompressionS2, eventlog.CompressionNone} {
		dir := t.TempDir()
		e, err := StartEnv(context.Background(), EnvConfig{Dir: dir, Compression: c})
		if err != nil {
			t.Fatal(err)
		}
		before, whole0 := dirSize(t, eventlog.StoreDir(filepath.Join(dir, "node"))), dirSize(t, dir)
		lat, el, err := Drive(context.Background(), n, parallel, 0, e.RawHTTPInvoke())
		e.Close()
		if err != nil {
			t.Fatal(err)
		}
		store, whole := dirSize(t, eventlog.StoreDir(filepath.Join(dir, "node")))-before, dirSize(t, dir)-whole0
		t.Logf("compression %s, %d in flight: %d invocations at %.0f/s: log store +%d bytes (%d per invocation), data dir +%d bytes (%d per invocation)",
			c, parallel, len(lat), float64(len(lat))/el.Seconds(), store, store/int64(len(lat)), whole, whole/int64(len(lat)))
		proj := capdir.ProjectionPath(filepath.Join(dir, "node"))
		inUse, size := boltPages(t, proj)
		t.Logf("compression %s: projection file %d bytes (%d per invocation), pages in use %d bytes (%d per invocation); data dir with the projection's pages in use %d per invocation",
			c, size, size/int64(len(lat)), inUse, inUse/int64(len(lat)), (whole-size+inUse)/int64(len(lat)))
		// bbolt grows its file ahead of its pages; capdir compact cuts it to them.
		st, err := projector.Compact(proj)
		if err != nil {
			t.Fatal(err)
		}
		whole = dirSize(t, dir) - whole0
		t.Logf("compression %s: projection %d bytes, %d once compacted; data dir +%d bytes once compacted (%d per invocation)",
			c, st.Before, st.After, whole, whole/int64(len(lat)))
	}
}
