package fnrunner

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/capdir/capdir/internal/allocstest"
)

var plainStringsSeeds = []string{
	`["hi"]`, `["a","b"]`, ` [ "a" , "" ]  `, `[]`, ` [ ] `, "[\"a\"]\n", `["a|b","c d","$1"]`,
	`["a\"b"]`, `["é"]`, `["\u00e9"]`, `["a",1]`, `[1]`, `["a",]`, `["a"]x`, `["a"`, `[`, `"a"`, `{}`, `null`,
	`["a"]]`, `[["a"]]`, `["a"] ["b"]`, "[\"a\tb\"]",
}

// Whatever plainStrings reads, json.Unmarshal reads the same from the same
// text into an any; what it leaves is json.Unmarshal's to read (or refuse).
func FuzzPlainStringsReadAsJSONReadsThem(f *testing.F) {
	for _, s := range plainStringsSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rendered string) {
		checkPlainStrings(t, rendered)
	})
}

func checkPlainStrings(t *testing.T, rendered string) bool {
	t.Helper()
	got, ok := plainStrings(rendered)
	if !ok {
		return false
	}
	var want any
	if err := json.Unmarshal([]byte(rendered), &want); err != nil {
		t.Fatalf("%q: read as %#v, json.Unmarshal refuses it: %v", rendered, got, err)
	}
	if !reflect.DeepEqual(any(got), want) {
		t.Fatalf("%q: read as %#v, json.Unmarshal reads %#v", rendered, got, want)
	}
	return true
}

// The common templates' renderings are read without the general decoder, the
// rest left to it.
func TestPlainStringsReadsTheCommonForms(t *testing.T) {
	for _, s := range []string{`["hi"]`, `["a","b"]`, ` [ "a" , "" ]  `, `[]`, "[\"a\"]\n"} {
		if !checkPlainStrings(t, s) {
			t.Errorf("%q was left to the general decoder", s)
		}
	}
	for _, s := range []string{`["a\"b"]`, `["é"]`, `["a",1]`, `["a",]`, `["a"]x`, `["a"`, `{}`, `null`, `[["a"]]`, "[\"a\tb\"]"} {
		if got, ok := plainStrings(s); ok {
			t.Errorf("%q read as %#v; it is the general decoder's", s, got)
		}
	}
	if n := allocstest.PerRun(t, 100, func() { plainStrings(`["hello"]`) }); n > 2 {
		t.Errorf("reading one argument allocates %v times, want at most 2", n)
	}
}
