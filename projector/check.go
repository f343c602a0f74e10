package projector

import (
	"slices"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// The fold-time checks. They are structural and stable across versions (see the
// package doc, Fold-time checks): an event is folded only if its type is one this
// version folds, its subject is of that type's family, its data decodes, every key
// it names is its subject's key, and a mutation's action and row are well formed.

// Skip reasons: the reason label of capdir_projector_events_skipped_total.
const (
	reasonBadEnvelope  = "bad_envelope"  // the message is not an event envelope
	reasonUnknownType  = "unknown_type"  // a type this version does not fold
	reasonWrongSubject = "wrong_subject" // the type does not belong to its subject's family
	reasonBadData      = "bad_data"      // the data does not decode, or lacks what the fold needs
	reasonKeyMismatch  = "key_mismatch"  // a key the data names is not its subject's key
	reasonBadMutation  = "bad_mutation"  // a mutation's action, row presence or row type
	reasonFoldError    = "fold_error"    // the event passed the checks and could not be stored
)

// skipReasons lists every reason, so each stream's series exist from the start.
var skipReasons = []string{reasonBadEnvelope, reasonUnknownType, reasonWrongSubject,
	reasonBadData, reasonKeyMismatch, reasonBadMutation, reasonFoldError}

// rule is what the fold asks of one event type: the subject families it may be
// on, and the fold that decodes, checks and applies it, given its subject.
type rule struct {
	families []wire.Family
	fold     func(f *folder, s *eventlog.Stored, subj wire.Subject) error
}

// rules are the event types this version folds, each with its subject families and
// its fold.
var rules = map[string]rule{
	wire.TypeDirectoryMutate:     {[]wire.Family{wire.DirectoryFamily}, (*folder).directory},
	wire.TypeInvocationRequested: {[]wire.Family{wire.RequestFamily, wire.BusRequestFamily, wire.StepFamily}, (*folder).request},
	wire.TypeReceipt:             {[]wire.Family{wire.ReceiptFamily}, (*folder).receipt},
	wire.TypeBreakerReset:        {[]wire.Family{wire.BreakerFamily}, (*folder).breakerReset},
	wire.TypeTokenRevoked:        {[]wire.Family{wire.TokenFamily}, (*folder).tokenRevoked},
	wire.TypeApprovalRequested:   {[]wire.Family{wire.ApprovalFamily}, (*folder).approvalRequested},
	wire.TypeApprovalDecided:     {[]wire.Family{wire.ApprovalFamily}, (*folder).approvalDecided},
	wire.TypeUpstreamRegistered:  {[]wire.Family{wire.UpstreamFamily}, (*folder).upstreamRegistered},
	wire.TypeUpstreamRemoved:     {[]wire.Family{wire.UpstreamFamily}, (*folder).upstreamRemoved},
	wire.TypeNodeKeyAnnounced:    {[]wire.Family{wire.NodeKeyFamily}, (*folder).nodeKeyAnnounced},
}

// checkEvent finds s's rule: s must be an envelope of a type this version folds,
// on a subject of that type's family.
func checkEvent(s *eventlog.Stored, subj wire.Subject) (rule, error) {
	if s.Invalid != "" {
		return rule{}, skipf(reasonBadEnvelope, "not an event envelope: %s", clipTo(s.Invalid, 256))
	}
	r, ok := rules[s.Type]
	if !ok {
		return rule{}, skipf(reasonUnknownType, "type %q is not one this version folds", clip(s.Type))
	}
	if !slices.Contains(r.families, subj.Family) {
		on := "not a subject of capdir's log"
		if subj.Family != wire.NoFamily {
			on = "a " + subj.Family.String() + " subject"
		}
		return rule{}, skipf(reasonWrongSubject, "%s on subject %q (%s); it belongs on a %s subject",
			s.Type, clip(s.Subject), on, r.families[0])
	}
	return r, nil
}

// decodeData decodes s's data into v. The decoder's message is not repeated: it may
// quote the data, and the data is not the projector's to log.
func decodeData(s *eventlog.Stored, v any) error {
	if err := s.DataAs(v); err != nil {
		return skipf(reasonBadData, "%s data (%d bytes) does not decode", s.Type, len(s.Data))
	}
	return nil
}

// sameKey checks that the key the data names in field is key, its subject's.
func sameKey(field, named, key string) error {
	if named != key {
		return skipf(reasonKeyMismatch, "%s %q is not its subject's key %s", field, clip(named), key)
	}
	return nil
}

// checkMutation decodes a DIRECTORY_MUTATE on key's subject and checks it: its key
// and its row's key are key, its action is one of create, replace, patch and delete,
// it carries a row unless it deletes, and the row's type is one of the four.
func checkMutation(s *eventlog.Stored, key string) (contract.DirectoryMutation, error) {
	var m contract.DirectoryMutation
	if err := decodeData(s, &m); err != nil {
		return m, err
	}
	if err := sameKey("key", m.Key, key); err != nil {
		return m, err
	}
	switch m.Action {
	case contract.ActionCreate, contract.ActionReplace, contract.ActionPatch:
		if m.Row == nil {
			return m, skipf(reasonBadMutation, "a %s of %s without a row", m.Action, key)
		}
		if err := sameKey("row.key", m.Row.Key, key); err != nil {
			return m, err
		}
		if !slices.Contains(contract.Types, m.Row.Type) {
			return m, skipf(reasonBadMutation, "row %s has type %q, not one of fn, http, agent, flow", key, clip(m.Row.Type))
		}
	case contract.ActionDelete:
		if m.Row != nil {
			return m, skipf(reasonBadMutation, "a delete of %s with a row", key)
		}
	default:
		return m, skipf(reasonBadMutation, "action %q is not one of create, replace, patch, delete", clip(m.Action))
	}
	return m, nil
}

// checkRequest decodes an INVOCATION_REQUESTED on subj: a key it names is subj's
// key; a key or invocation id it leaves empty is derived as the dispatcher derives
// it. A bus client's invocation id must be one the dispatcher accepts
// (wire.ValidInvocationID): the worker drops any other request unrun, so folding
// it would leave the id pending for good, first-request-stands, in the client's
// name.
func checkRequest(s *eventlog.Stored, subj wire.Subject) (requestHead, error) {
	var r requestHead
	if !decodeRequestHead(s.Data, subj.Key, &r) {
		var err error
		if r, err = decodeDataAs[requestHead](s); err != nil {
			return r, err
		}
	}
	if r.Key == "" {
		r.Key = subj.Key
	}
	if err := sameKey("key", r.Key, subj.Key); err != nil {
		return r, err
	}
	if r.InvocationID == "" {
		r.InvocationID = wire.RequestInvocationID(s.ID)
	}
	if subj.Family == wire.BusRequestFamily && !wire.ValidInvocationID(r.InvocationID) {
		return r, skipf(reasonBadData, "bus request of %s: invocation id %q is not one a bus client may choose", subj.Key, clip(r.InvocationID))
	}
	return r, nil
}

// decodeDataAs is decodeData into a T of its own: the general decoder takes
// its target's address through an interface, which puts that target on the
// heap, so a head read by hand (the usual case) is kept apart from it and stays
// on its caller's stack.
func decodeDataAs[T any](s *eventlog.Stored) (T, error) {
	var v T
	err := decodeData(s, &v)
	return v, err
}

// checkReceipt decodes a RECEIPT on subj: it names an invocation, the subject's
// when the subject names one (the layout of older logs), and subj's key.
func checkReceipt(s *eventlog.Stored, subj wire.Subject) (receiptHead, error) {
	var r receiptHead
	if !decodeReceiptHead(s.Data, subj.Key, &r) {
		var err error
		if r, err = decodeDataAs[receiptHead](s); err != nil {
			return r, err
		}
	}
	if r.InvocationID == "" {
		return r, skipf(reasonBadData, "a receipt without an invocation id")
	}
	if subj.Invocation != "" && r.InvocationID != subj.Invocation {
		return r, skipf(reasonKeyMismatch, "invocation_id %q is not its subject's invocation %s", clip(r.InvocationID), clip(subj.Invocation))
	}
	return r, sameKey("key", r.Key, subj.Key)
}

// checkReset decodes a BREAKER_RESET on key's subject: it names key.
func checkReset(s *eventlog.Stored, key string) (eventlog.BreakerReset, error) {
	var r eventlog.BreakerReset
	if err := decodeData(s, &r); err != nil {
		return r, err
	}
	return r, sameKey("key", r.Key, key)
}

// clip bounds what an event claims to 64 bytes for a log line.
func clip(s string) string { return clipTo(s, 64) }

func clipTo(s string, max int) string {
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}

// skip records that s was not folded, to be reported once the batch commits.
func (fx *effects) skip(s *eventlog.Stored, err error) {
	fx.skips = append(fx.skips, skipped{seq: s.Seq, subject: s.Subject, typ: s.Type, id: s.ID, err: err})
}

// reportSkips logs and counts the events a committed batch did not fold. The line
// names the event (sequence, subject, type, id) and why, never its data.
func (p *Projector) reportSkips(stream string, skips []skipped) {
	for _, sk := range skips {
		reason := skipReason(sk.err)
		p.cfg.Logger.Warn("projector: event skipped", "stream", stream, "seq", sk.seq,
			"subject", clip(sk.subject), "type", clip(sk.typ), "id", clip(sk.id), "reason", reason, "err", sk.err)
		p.cfg.Metrics.skipped(stream, reason)
	}
}
