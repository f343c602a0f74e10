package projector

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	bolt "go.etcd.io/bbolt"
)

// Approvals. APPROVAL_REQUESTED and APPROVAL_DECIDED events, on one control-stream
// subject per invocation, are folded into three buckets the digest covers:
// approvals (invocation id -> Approval JSON), approvals_pending (the invocations
// not yet decided) and approvals_decided (decision time, then invocation id: the
// decisions in time order, for the dispatcher's sweeper to find a decided
// approval whose receipt is missing). The fold reads the events only, never a
// clock, so a replay gives back the same approvals; whether an undecided approval
// has expired is the reader's question (Approval.ExpiredAt). The first request and
// the first decision of an invocation stand; later ones change nothing.

// Approval is one call's approval as folded: the request, and the decision once
// there is one.
type Approval struct {
	wire.ApprovalRequested
	// Seq is the control-stream sequence of the APPROVAL_REQUESTED: a decision is
	// appended expecting it as its subject's last, so only one decision lands.
	Seq uint64 `json:"seq"`
	// Decision is wire.DecisionApprove, DecisionDeny or DecisionExpire; empty while
	// undecided.
	Decision  string    `json:"decision,omitempty"`
	DecidedBy string    `json:"decided_by,omitempty"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
}

// Decided reports whether the approval has its decision.
func (a *Approval) Decided() bool { return a.Decision != "" }

// ExpiredAt reports whether the approval is expired at now: decided expire, or
// undecided and past its expiry.
func (a *Approval) ExpiredAt(now time.Time) bool {
	return a.Decision == wire.DecisionExpire || !a.Decided() && !now.Before(a.ExpiresAt)
}

func (f *folder) approvalRequested(s *eventlog.Stored, subj wire.Subject) error {
	var r wire.ApprovalRequested
	if err := decodeData(s, &r); err != nil {
		return err
	}
	if err := sameKey("invocation_id", r.InvocationID, subj.Key); err != nil {
		return err
	}
	if !wire.ValidKey(r.Key) || r.RequestSeq == 0 || r.ExpiresAt.IsZero() {
		return skipf(reasonBadData, "approval request of %s: needs a key, a request sequence and an expiry", subj.Key)
	}
	if f.tx.Bucket(bucketApprovals).Get([]byte(r.InvocationID)) != nil {
		return nil // the first request stands
	}
	if err := putApproval(f.tx, &Approval{ApprovalRequested: r, Seq: s.Seq}); err != nil {
		return err
	}
	return put(f.tx, bucketApprovalsPending, []byte(r.InvocationID), nil)
}

func (f *folder) approvalDecided(s *eventlog.Stored, subj wire.Subject) error {
	var d wire.ApprovalDecided
	if err := decodeData(s, &d); err != nil {
		return err
	}
	if err := sameKey("invocation_id", d.InvocationID, subj.Key); err != nil {
		return err
	}
	if !wire.ValidDecision(d.Decision) || d.At.IsZero() {
		return skipf(reasonBadData, "approval decision of %s: %q is not approve, deny or expire, or it has no time", subj.Key, clip(d.Decision))
	}
	a, ok, err := loadApproval(f.tx, d.InvocationID)
	if err != nil {
		return err
	}
	if !ok {
		return skipf(reasonBadData, "approval decision of %s, whose approval was never requested", subj.Key)
	}
	if a.Decided() {
		return nil // the first decision stands
	}
	a.Decision, a.DecidedBy, a.DecidedAt = d.Decision, d.By, d.At.UTC()
	if err := putApproval(f.tx, &a); err != nil {
		return err
	}
	if err := f.tx.Bucket(bucketApprovalsPending).Delete([]byte(d.InvocationID)); err != nil {
		return err
	}
	return put(f.tx, bucketApprovalsDecided, decidedKey(a.DecidedAt, d.InvocationID), nil)
}

// decidedKey orders decisions by time: Unix nanoseconds, big-endian, then the id.
func decidedKey(at time.Time, inv string) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(at.UnixNano())), inv...)
}

func putApproval(tx *bolt.Tx, a *Approval) error {
	v, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return put(tx, bucketApprovals, []byte(a.InvocationID), v)
}

func loadApproval(tx *bolt.Tx, inv string) (Approval, bool, error) {
	var a Approval
	v, err := get(tx, bucketApprovals, []byte(inv))
	if err != nil || v == nil {
		return a, false, err
	}
	if err := json.Unmarshal(v, &a); err != nil {
		return a, false, fmt.Errorf("approval %s: %w", inv, err)
	}
	return a, true, nil
}

// Approval returns the approval of an invocation, ErrNotFound when it has none.
func (p *Projector) Approval(invocationID string) (Approval, error) {
	var a Approval
	var ok bool
	err := p.view(func(tx *bolt.Tx) error {
		var err error
		a, ok, err = loadApproval(tx, invocationID)
		return err
	})
	if err != nil {
		return a, fmt.Errorf("projector: %w", err)
	}
	if !ok {
		return a, ErrNotFound
	}
	return a, nil
}

// PendingApprovals returns every approval not yet decided, oldest invocation
// first; those past their expiry included (see Approval.ExpiredAt).
func (p *Projector) PendingApprovals() ([]Approval, error) {
	var out []Approval
	err := p.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketApprovalsPending).ForEach(func(k, _ []byte) error {
			a, ok, err := loadApproval(tx, string(k))
			if err != nil || !ok {
				return err
			}
			out = append(out, a)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("projector: pending approvals: %w", err)
	}
	return out, nil
}

// ApprovalsDecidedSince returns the approvals decided at or after since, in the
// order of their decisions.
func (p *Projector) ApprovalsDecidedSince(since time.Time) ([]Approval, error) {
	var out []Approval
	err := p.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketApprovalsDecided).Cursor()
		from := binary.BigEndian.AppendUint64(nil, uint64(max(since.UnixNano(), 0)))
		for k, _ := c.Seek(from); k != nil; k, _ = c.Next() {
			a, ok, err := loadApproval(tx, string(k[8:]))
			if err != nil {
				return err
			}
			if ok {
				out = append(out, a)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("projector: decided approvals: %w", err)
	}
	return out, nil
}
