package projector

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	bolt "go.etcd.io/bbolt"
)

// effects are in-memory consequences of a batch, published only after it commits.
type effects struct {
	dir []dirChange
}

type dirChange struct {
	key     string
	seq     *int64
	deleted bool
}

// folder applies events to one bbolt transaction.
type folder struct {
	tx      *bolt.Tx
	breaker breaker.Config
	fx      *effects
}

func (f *folder) fold(s *eventlog.Stored) error {
	if s.Invalid != "" {
		return fmt.Errorf("not an event: %s", s.Invalid)
	}
	// A bus client's subjects are the only part of the log a client can write:
	// what it publishes there is folded as its request, or not at all (a receipt, a
	// directory mutation or a breaker reset it wrote would otherwise be believed).
	if wire.IsBusRequestSubject(s.Subject) && s.Type != eventlog.TypeInvocationRequested {
		return fmt.Errorf("%s event on a bus client's request subject %s", s.Type, s.Subject)
	}
	switch s.Type {
	case eventlog.TypeDirectoryMutate:
		return f.directory(s)
	case eventlog.TypeInvocationRequested:
		return f.request(s)
	case eventlog.TypeReceipt:
		return f.receipt(s)
	case eventlog.TypeBreakerReset:
		return f.breakerReset(s)
	}
	return nil // types this version does not project
}

func (f *folder) directory(s *eventlog.Stored) error {
	var m eventlog.DirectoryMutation
	if err := s.DataAs(&m); err != nil {
		return err
	}
	if err := contract.ValidateKey(m.Key); err != nil {
		return err
	}
	key := []byte(m.Key)
	if err := f.tx.Bucket(bucketDirSeq).Put(key, u64(s.Seq)); err != nil {
		return err
	}
	rows := f.tx.Bucket(bucketRows)
	if m.Action == eventlog.ActionDelete || m.Row == nil {
		f.fx.dir = append(f.fx.dir, dirChange{key: m.Key, deleted: true})
		return rows.Delete(key)
	}
	row := *m.Row
	row.RowNum = 0
	b, err := json.Marshal(&row)
	if err != nil {
		return err
	}
	f.fx.dir = append(f.fx.dir, dirChange{key: m.Key, seq: row.Seq})
	return rows.Put(key, b)
}

// requestHead is the part of a request the fold reads.
type requestHead struct {
	InvocationID string `json:"invocation_id"`
	Key          string `json:"key"`
}

func (f *folder) request(s *eventlog.Stored) error {
	var r requestHead
	if err := s.DataAs(&r); err != nil {
		return err
	}
	// A bus client may leave both empty: the dispatcher derives them the same way.
	if r.InvocationID == "" {
		r.InvocationID = eventlog.RequestInvocationID(s.ID)
	}
	if r.Key == "" {
		r.Key = s.Subject[strings.LastIndexByte(s.Subject, '.')+1:]
	}
	return f.tx.Bucket(bucketInvocations).Put([]byte(r.InvocationID), []byte(r.Key))
}

// receiptHead is the part of a receipt the fold reads: the receipt itself is stored
// as it was appended, so decoding the rest (body, result, fingerprints) is waste.
type receiptHead struct {
	InvocationID      string    `json:"invocation_id"`
	Key               string    `json:"key"`
	FinishedAt        time.Time `json:"finished_at"`
	CredTag           string    `json:"cred_tag"`
	BreakerGeneration uint64    `json:"breaker_generation"`
	BreakerKind       string    `json:"breaker_kind"`
}

func (f *folder) receipt(s *eventlog.Stored) error {
	var r receiptHead
	if err := s.DataAs(&r); err != nil {
		return err
	}
	if r.InvocationID == "" {
		return fmt.Errorf("receipt without invocation id")
	}
	rb := f.tx.Bucket(bucketReceipts)
	if rb.Get([]byte(r.InvocationID)) != nil {
		return nil // one receipt per invocation: the first one stands
	}
	if err := rb.Put([]byte(r.InvocationID), s.Data); err != nil {
		return err
	}
	if err := f.tx.Bucket(bucketByKey).Put(byKeyKey(r.Key, s.Seq), []byte(r.InvocationID)); err != nil {
		return err
	}
	return f.observe(&r)
}

// observe folds the receipt into its row's breaker.
func (f *folder) observe(r *receiptHead) error {
	var kind breaker.Kind
	if err := kind.UnmarshalText([]byte(r.BreakerKind)); err != nil || kind == breaker.NotCounted {
		return nil
	}
	bb := f.tx.Bucket(bucketBreakers)
	st, existed, err := loadBreaker(bb, r.Key)
	if err != nil {
		return err
	}
	if !existed && kind == breaker.UpstreamOther {
		return nil // a success on a breaker that never struck changes nothing
	}
	next := f.breaker.Observe(st, breaker.Observation{At: r.FinishedAt, Kind: kind, CredTag: r.CredTag, Generation: r.BreakerGeneration})
	return putBreaker(bb, next)
}

func (f *folder) breakerReset(s *eventlog.Stored) error {
	var r eventlog.BreakerReset
	if err := s.DataAs(&r); err != nil {
		return err
	}
	bb := f.tx.Bucket(bucketBreakers)
	st, _, err := loadBreaker(bb, r.Key)
	if err != nil {
		return err
	}
	return putBreaker(bb, f.breaker.Reset(st))
}

func loadBreaker(bb *bolt.Bucket, key string) (breaker.State, bool, error) {
	v := bb.Get([]byte(key))
	if v == nil {
		return breaker.State{Key: key}, false, nil
	}
	var st breaker.State
	if err := json.Unmarshal(v, &st); err != nil {
		return breaker.State{}, false, fmt.Errorf("breaker %s: %w", key, err)
	}
	return st, true, nil
}

func putBreaker(bb *bolt.Bucket, st breaker.State) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return bb.Put([]byte(st.Key), b)
}
