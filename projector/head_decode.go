package projector

import (
	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/jsonmember"
)

// The fold reads a few fields of every receipt and request (receiptHead,
// requestHead) out of data that runs to hundreds of bytes. The general decoder
// (wire.Event.DataAs) handles every JSON document; these read the form capdir
// writes by hand, and give up, for DataAs to decide, on anything else:
//
//   - data that is not one object, or a member key with an escape, a byte
//     outside printable ASCII, or a different spelling of a field's name (the
//     general decoder matches names regardless of case);
//   - a field given twice, or given a value of a type other than its own (null
//     included), or a string value with an escape or a byte outside printable
//     ASCII, or a number that is not plain digits;
//
// so that what they accept, they read as DataAs reads it
// (FuzzHeadsDecodedAsDataAsDecodesThem). Other members' values are skipped by
// their structure alone: the data of an event read from the log is valid JSON
// (wire checks it as it decodes the event), which is the only data the fold sees.
//
// The strings they make are the subject's key itself when they spell it, a
// breaker kind's name or the owner's actor when they spell one, so a fold
// allocates for the invocation id and little else.

// decodeReceiptHead fills r from data and reports whether it could; key is the
// receipt subject's key.
func decodeReceiptHead(data []byte, key string, r *receiptHead) bool {
	return jsonmember.Fields(data, receiptHeadNames, func(name, v []byte) (field int, ok bool) {
		switch string(name) {
		case "invocation_id":
			r.InvocationID, ok = plainString(v)
			return 0, ok
		case "key":
			r.Key, ok = plainString(v, key)
			return 1, ok
		case "actor":
			r.Actor, ok = plainString(v, wire.OwnerActor)
			return 2, ok
		case "finished_at":
			return 3, len(v) > 0 && v[0] == '"' && r.FinishedAt.UnmarshalJSON(v) == nil
		case "cred_tag":
			r.CredTag, ok = plainString(v)
			return 4, ok
		case "breaker_generation":
			r.BreakerGeneration, ok = jsonmember.Uint(v)
			return 5, ok
		case "breaker_kind":
			r.BreakerKind, ok = plainString(v, kindNames...)
			return 6, ok
		}
		return -1, false
	})
}

// decodeRequestHead fills r from data and reports whether it could; key is the
// request subject's key.
func decodeRequestHead(data []byte, key string, r *requestHead) bool {
	return jsonmember.Fields(data, requestHeadNames, func(name, v []byte) (field int, ok bool) {
		switch string(name) {
		case "invocation_id":
			r.InvocationID, ok = plainString(v)
			return 0, ok
		case "key":
			r.Key, ok = plainString(v, key)
			return 1, ok
		}
		return -1, false
	})
}

var (
	receiptHeadNames = []string{"invocation_id", "key", "actor", "finished_at", "cred_tag", "breaker_generation", "breaker_kind"}
	requestHeadNames = []string{"invocation_id", "key"}
	// kindNames are the breaker kinds' names, which every receipt spells.
	kindNames = func() []string {
		var names []string
		for k := breaker.NotCounted; k <= breaker.UpstreamOther; k++ {
			names = append(names, k.String())
		}
		return names
	}()
)

// plainString is v, a JSON string of printable ASCII without escapes, unquoted:
// one of same itself when it spells it, so that no string is made for it.
func plainString(v []byte, same ...string) (string, bool) {
	t, ok := jsonmember.Text(v)
	if !ok {
		return "", false
	}
	for _, s := range same {
		if string(t) == s {
			return s, true
		}
	}
	return string(t), true
}
