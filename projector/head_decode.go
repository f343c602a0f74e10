package projector

import (
	"bytes"
	"strconv"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/eventlog/wire"
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
	var seen uint8
	return eachMember(data, func(name, v []byte) bool {
		var bit uint8
		var ok bool
		switch string(name) {
		case "invocation_id":
			bit = 1
			r.InvocationID, ok = plainString(v)
		case "key":
			bit = 2
			r.Key, ok = plainString(v, key)
		case "actor":
			bit = 4
			r.Actor, ok = plainString(v, wire.OwnerActor)
		case "finished_at":
			bit = 8
			ok = len(v) > 0 && v[0] == '"' && r.FinishedAt.UnmarshalJSON(v) == nil
		case "cred_tag":
			bit = 16
			r.CredTag, ok = plainString(v)
		case "breaker_generation":
			bit = 32
			r.BreakerGeneration, ok = plainUint(v)
		case "breaker_kind":
			bit = 64
			r.BreakerKind, ok = plainString(v, kindNames...)
		default:
			return !foldsToField(name, receiptHeadNames)
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	})
}

// decodeRequestHead fills r from data and reports whether it could; key is the
// request subject's key.
func decodeRequestHead(data []byte, key string, r *requestHead) bool {
	var seen uint8
	return eachMember(data, func(name, v []byte) bool {
		var bit uint8
		var ok bool
		switch string(name) {
		case "invocation_id":
			bit = 1
			r.InvocationID, ok = plainString(v)
		case "key":
			bit = 2
			r.Key, ok = plainString(v, key)
		default:
			return !foldsToField(name, requestHeadNames)
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
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

// foldsToField reports whether name, which is none of names exactly, is one of
// them in another case: the general decoder would take it for that field.
func foldsToField(name []byte, names []string) bool {
	for _, n := range names {
		if len(n) == len(name) && equalFoldASCII(name, n) {
			return true
		}
	}
	return false
}

func equalFoldASCII(b []byte, s string) bool {
	for i := range len(b) {
		c, d := b[i], s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if 'A' <= d && d <= 'Z' {
			d += 'a' - 'A'
		}
		if c != d {
			return false
		}
	}
	return true
}

// plainString is v, a JSON string of printable ASCII without escapes, unquoted:
// one of same itself when it spells it, so that no string is made for it.
func plainString(v []byte, same ...string) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	v = v[1 : len(v)-1]
	for _, c := range v {
		if c < 0x20 || c >= 0x7f || c == '\\' || c == '"' {
			return "", false
		}
	}
	for _, s := range same {
		if string(v) == s {
			return s, true
		}
	}
	return string(v), true
}

// plainUint is v, a JSON number of at most 19 plain digits (no sign, fraction
// or exponent; no leading zero but 0 itself).
func plainUint(v []byte) (uint64, bool) {
	if len(v) == 0 || len(v) > 19 || (v[0] == '0' && len(v) > 1) {
		return 0, false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(string(v), 10, 64)
	return n, err == nil
}

// eachMember calls fn with each member of the JSON object data, its name (of
// printable ASCII, without escapes) and its value as written, in order, until fn
// returns false. It reports whether data was such an object and fn took every
// member. data must be valid JSON: a value is skipped by its brackets and quotes
// alone.
func eachMember(data []byte, fn func(name, v []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return skipSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return false
		}
		j := i + 1
		for j < len(data) && data[j] != '"' {
			if c := data[j]; c < 0x20 || c >= 0x7f || c == '\\' {
				return false
			}
			j++
		}
		if j >= len(data) {
			return false
		}
		name := data[i+1 : j]
		i = skipSpace(data, j+1)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipSpace(data, i+1)
		end := skipValue(data, i)
		if end < 0 || !fn(name, data[i:end]) {
			return false
		}
		i = skipSpace(data, end)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return skipSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
}

// skipValue is the index just past the JSON value starting at data[i], or -1.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				if j = skipString(data, j); j < 0 {
					return -1
				}
				j-- // the loop's j++ lands just past the string
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
	scan:
		for j < len(data) {
			switch data[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				break scan
			}
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}

// skipString is the index just past the JSON string starting at data[i], or -1:
// its closing quote is the first quote after an even run of backslashes (none
// included).
func skipString(data []byte, i int) int {
	for j := i + 1; ; {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return -1
		}
		q := j + k
		run := 0
		for p := q - 1; p > i && data[p] == '\\'; p-- {
			run++
		}
		if run%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
