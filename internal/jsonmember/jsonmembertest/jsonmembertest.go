// Package jsonmembertest makes random JSON objects for the tests that hold a
// hand-written reader of event data to what the general decoder reads.
package jsonmembertest

import (
	"encoding/json"
	"testing"
)

// spaces are the white space put around every token: none, and each kind JSON
// allows.
var spaces = []string{"", " ", "\n\t", "\r "}

// Objects calls fn with n JSON objects of up to eight members, each named one
// of names (written between quotes as given) with one of values, spaced every
// way JSON allows. The objects are the same from run to run. names and values
// must make valid JSON: t fails on an object that is not.
func Objects(t testing.TB, n int, names, values []string, fn func(object []byte)) {
	t.Helper()
	rng := uint64(1)
	next := func(n int) int {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return int(rng % uint64(n))
	}
	for range n {
		var b []byte
		sp := func() { b = append(b, spaces[next(len(spaces))]...) }
		sp()
		b = append(b, '{')
		for m := range next(9) {
			if m > 0 {
				b = append(b, ',')
			}
			sp()
			b = append(b, '"')
			b = append(b, names[next(len(names))]...)
			b = append(b, '"')
			sp()
			b = append(b, ':')
			sp()
			b = append(b, values[next(len(values))]...)
			sp()
		}
		b = append(b, '}')
		sp()
		if !json.Valid(b) {
			t.Fatalf("the names and values made invalid JSON: %s", b)
		}
		fn(b)
	}
}
