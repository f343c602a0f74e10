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
	return eachField(data, receiptHeadNames, func(name, v []byte) (field int, ok bool) {
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
			r.BreakerGeneration, ok = plainUint(v)
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
	return eachField(data, requestHeadNames, func(name, v []byte) (field int, ok bool) {
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

// eachField calls set with each member of the JSON object data, its name and
// its value as written; set reads the members named exactly one of names,
// saying which (its index in names, at most 7) and whether it could, and returns
// -1 for any other. eachField reports whether data was such an object and set
// read each of its fields, given once: it gives up on a field given twice, and
// on a member named one of names in another case; it skips every other member.
func eachField(data []byte, names []string, set func(name, v []byte) (field int, ok bool)) bool {
	var seen uint8
	return eachMember(data, func(name, v []byte) bool {
		field, ok := set(name, v)
		if field < 0 {
			return !foldsToField(name, names)
		}
		if !ok || seen&(1<<field) != 0 {
			return false
		}
		seen |= 1 << field
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
	if !plainASCII(v) {
		return "", false
	}
	for _, s := range same {
		if string(v) == s {
			return s, true
		}
	}
	return string(v), true
}

// plainASCII reports whether b is printable ASCII without a quote or a
// backslash: the text of a JSON string that has no escape, as it is written.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f || c == '\\' || c == '"' {
			return false
		}
	}
	return true
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
