package projector

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/capdir/capdir/eventlog/wire"
	bolt "go.etcd.io/bbolt"
)

// A projection is only served by the fold that would build it. When a version of
// capdir folds some event differently from the versions before it, foldVersion
// goes up, and a projection an older fold built is not served as it is: Open sets
// it aside (<path>.fold<N>) and starts a fresh projection, which CatchUp and Run
// fold from sequence 1, when the log still holds every event of both streams.
// When it does not (retention removed some, or Open was given no log), folding
// again would lose what the log no longer holds, the ledger's leaves among them,
// so the projection is served as the older fold built it, with a warning each
// time it is opened; when the log cannot say, Open refuses with a
// *FoldVersionError. A projection a later fold built (capdir downgraded) is
// refused with a *NewerFoldError, the file as it was: this fold cannot tell what
// the later one folds differently, and an operator going back a version for a
// while expects to come forward again to the projection they left, not to a
// rebuild (`capdir replay` rebuilds it with this fold when asked).
//
// foldVersionKey, in the meta bucket, names the version of the fold that built the
// projection. A projection without it was built by fold version 1. A fresh one
// (nothing folded yet) gets the current version at once, and so does one that
// folded no event of a stream a later fold changed (foldChanges): that fold
// would build the same projection. The key says how the projection was built, not
// what the log holds, so it stays out of the digest.
var foldVersionKey = []byte("fold/version")

// foldVersion is the version of this fold.
//
//  1. the first fold;
//  2. a bus client's request under an invocation id another sender's request
//     holds is folded as the client's own pending invocation, under the id scoped
//     to it (wire.ScopedInvocationID); version 1 dropped it as a duplicate.
//  3. packs (several of capdir's requests or receipts in one message) are folded
//     event by event; no event that a version before folded is folded
//     differently, so a projection version 2 built is this fold's as it is, but
//     version 2 would skip a pack, and refuses a projection this one built.
const foldVersion uint64 = 3

// foldChanges names, for each fold version, the streams whose fold it changed.
var foldChanges = map[uint64][]string{2: {wire.DataStream}, 3: nil}

// setAsideFoldPath is where a projection an older fold built is set aside.
func setAsideFoldPath(path string, version uint64) string {
	return fmt.Sprintf("%s.fold%d", path, version)
}

// metaValue is the value under k in the meta bucket of tx, before Open has given
// a file an older version wrote its checksums (sum.go) or its buckets: nil when
// either is absent.
func metaValue(tx *bolt.Tx, k []byte) ([]byte, error) {
	meta := tx.Bucket(bucketMeta)
	switch {
	case meta == nil:
		return nil, nil
	case summedFile(tx):
		return get(tx, bucketMeta, k)
	}
	return meta.Get(k), nil
}

// staleFold reports whether an older fold (or a later one) built the projection
// in tx, one that this fold would build otherwise, and which version did. It
// writes nothing, so Open can refuse the file as it found it.
func staleFold(tx *bolt.Tx) (have uint64, stale bool, err error) {
	v, err := metaValue(tx, foldVersionKey)
	if err != nil {
		return 0, false, err
	}
	have = 1
	if v != nil {
		have = readU64(v)
	}
	if have == foldVersion {
		return have, false, nil
	}
	for _, s := range wire.Streams {
		ckpt, err := metaValue(tx, checkpointKey(s))
		if err != nil {
			return have, false, err
		}
		if readU64(ckpt) > 0 && foldChanged(have, s) {
			return have, true, nil
		}
	}
	return have, false, nil
}

// stampFold marks the projection in tx, which staleFold has found this fold
// builds the same, as built by this fold.
func stampFold(tx *bolt.Tx) error { return put(tx, bucketMeta, foldVersionKey, u64(foldVersion)) }

// foldChanged reports whether a fold after version have, up to this one, folds
// stream differently. A version this fold does not know (a later one's) is taken
// to differ on every stream: openFolded refuses the file (*NewerFoldError) when
// it folded any event.
func foldChanged(have uint64, stream string) bool {
	if have > foldVersion {
		return true
	}
	for v := have + 1; v <= foldVersion; v++ {
		if slices.Contains(foldChanges[v], stream) {
			return true
		}
	}
	return false
}

// refold sets aside the projection at cfg.Path, which fold version have built,
// when the log can rebuild it (asIs false). When it cannot, it warns and says to
// serve the file as it is (asIs true); when the log cannot say, it returns the
// *FoldVersionError that refuses the file. The file is closed.
func refold(cfg Config, have uint64) (asIs bool, err error) {
	stream, first, err := missingFromLog(cfg)
	if err != nil {
		ferr := &FoldVersionError{Path: cfg.Path, Have: have, Want: foldVersion}
		return false, fmt.Errorf("%w; and the log could not say whether it can rebuild it: %w", ferr, err)
	}
	if stream != "" || cfg.Log == nil {
		why := "no log was given to rebuild it from"
		if stream != "" {
			why = fmt.Sprintf("stream %s holds events from sequence %d on (retention removed those before it)", stream, first)
		}
		cfg.Logger.Warn("projection built by an older fold, which the log cannot rebuild: serving it as that fold built it; "+
			"`capdir replay` would fold it again, without the events the log no longer holds (and their receipts' ledger leaves)",
			"path", cfg.Path, "fold_version", have, "current_fold_version", foldVersion, "why", why)
		return true, nil
	}
	aside := setAsideFoldPath(cfg.Path, have)
	cfg.Logger.Warn("projection built by an older fold; setting it aside and rebuilding it from the log",
		"path", cfg.Path, "fold_version", have, "current_fold_version", foldVersion, "set_aside", aside)
	if err := os.Rename(cfg.Path, aside); err != nil {
		return false, fmt.Errorf("projector: set aside %s: %w", cfg.Path, err)
	}
	return false, nil
}

// staleFoldError is openBolt's refusal of a projection an older fold built
// (staleFold): Open sets it aside or refuses it (refold).
type staleFoldError struct{ have uint64 }

func (e *staleFoldError) Error() string {
	return fmt.Sprintf("projector: the projection was built by fold version %d", e.have)
}

// openFolded opens the projection file (openBolt) when this fold built it or
// would build it the same (staleFold). One an older fold built is set aside and a
// fresh one opened in its place, served as it is, or refused as it was (refold).
func openFolded(cfg Config) (*bolt.DB, error) {
	db, err := openBolt(cfg, false)
	var stale *staleFoldError
	if !errors.As(err, &stale) {
		return db, err
	}
	if stale.have > foldVersion { // a downgrade: refused, the file as it was
		return nil, &NewerFoldError{Path: cfg.Path, Have: stale.have, Want: foldVersion}
	}
	asIs, err := refold(cfg, stale.have)
	if err != nil {
		return nil, err
	}
	return openBolt(cfg, asIs)
}
