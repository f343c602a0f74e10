package projector

import (
	"encoding/binary"
	"errors"

	"github.com/cespare/xxhash/v2"

	bolt "go.etcd.io/bbolt"
)

// Every value the projection stores is followed by the XXH64 hash of its key and
// the value (sumLen bytes, big-endian), and every read of a value checks it, so a value
// changed inside the file is never served: not at a start after an unclean stop
// (vet walks every value of a file without a seal), and not while the node runs.
// A mismatch is damage (damage.go): the read fails with a *DamagedError, the
// projector stops, the file is left unsealed, and the next start sets it aside and
// rebuilds it from the log. A check that a key is present reads no value and
// checks nothing.
//
// The checksum covers the key too, so a value moved under another key is found.
// XXH64 hashes gigabytes a second, and its assembly does not make the key and value
// escape (hash/crc32's dispatch through a function value does): a read path that
// checks a value allocates nothing for it.

// sumLen is the length of a value's checksum.
const sumLen = 8

// formatKey, in the meta bucket, says the file's values carry checksums. A file
// without it was written by a version that did not write them: Open adds them.
var (
	formatKey   = []byte("format")
	formatValue = []byte("xxh64")
)

func valueSum(k, v []byte) uint64 {
	var d xxhash.Digest
	d.Reset()
	d.Write(k)
	d.Write(v)
	return d.Sum64()
}

// summed is v followed by its checksum under k, in a new slice.
func summed(k, v []byte) []byte {
	sv := make([]byte, len(v)+sumLen)
	copy(sv, v)
	binary.BigEndian.PutUint64(sv[len(v):], valueSum(k, v))
	return sv
}

// put stores v under k in the bucket name of tx, with its checksum.
func put(tx *bolt.Tx, name, k, v []byte) error {
	return tx.Bucket(name).Put(k, summed(k, v))
}

// get is the value under k in the bucket name of tx, without its checksum: nil
// when k is absent, a *valueError when the checksum does not match.
func get(tx *bolt.Tx, name, k []byte) ([]byte, error) {
	sv := tx.Bucket(name).Get(k)
	if sv == nil {
		return nil, nil
	}
	return unsum(name, k, sv)
}

// unsum checks a value as stored under k in the bucket name (read by a cursor or
// ForEach) and returns it without its checksum.
func unsum(name, k, sv []byte) ([]byte, error) {
	n := len(sv) - sumLen
	if n < 0 || binary.BigEndian.Uint64(sv[n:]) != valueSum(k, sv[:n]) {
		return nil, &valueError{bucket: string(name), key: string(k)}
	}
	return sv[:n:n], nil
}

// each calls fn with every key of the bucket name of tx and its checked value, in
// order, and stops at the first mismatch or error of fn.
func each(tx *bolt.Tx, name []byte, fn func(k, v []byte) error) error {
	return tx.Bucket(name).ForEach(func(k, sv []byte) error {
		v, err := unsum(name, k, sv)
		if err != nil {
			return err
		}
		return fn(k, v)
	})
}

// summedFile reports whether the file's values carry checksums (formatKey).
func summedFile(tx *bolt.Tx) bool {
	meta := tx.Bucket(bucketMeta)
	return meta != nil && meta.Get(formatKey) != nil
}

// addSums gives every value of a file an older version wrote its checksum, and
// marks the file; a new file is only marked. One transaction: a crash leaves the
// file as it was.
func addSums(tx *bolt.Tx) error {
	if summedFile(tx) {
		return nil
	}
	for _, name := range append(allBuckets, bucketStreams) {
		b := tx.Bucket(name)
		var ks, vs [][]byte
		err := b.ForEach(func(k, v []byte) error {
			ks, vs = append(ks, append([]byte(nil), k...)), append(vs, summed(k, v))
			return nil
		})
		if err != nil {
			return err
		}
		for i, k := range ks {
			if err := b.Put(k, vs[i]); err != nil {
				return err
			}
		}
	}
	return put(tx, bucketMeta, formatKey, formatValue)
}

// checkSums checks every value of every bucket of a file whose values carry
// checksums; it returns the first mismatch.
func checkSums(tx *bolt.Tx) error {
	if !summedFile(tx) {
		return nil
	}
	for _, name := range append(allBuckets, bucketStreams) {
		if tx.Bucket(name) == nil {
			continue
		}
		if err := each(tx, name, func(_, _ []byte) error { return nil }); err != nil {
			return err
		}
	}
	return nil
}

// errValueSum is what every *valueError matches: errors.Is finds it without the
// allocation errors.As costs, on read paths that call isDamage every time.
var errValueSum = errors.New("projector: a stored value does not match its checksum")

// isDamage reports whether err is a value that failed its checksum.
func isDamage(err error) bool {
	return err != nil && errors.Is(err, errValueSum)
}
