package jsonmember

import (
	"encoding/json"
	"testing"
)

// Unescaped decodes the strings it takes as encoding/json does, and takes
// none it would decode otherwise: every one-byte escape and \u0000 to \u007f,
// nothing beyond ASCII.
func TestUnescapedAsEncodingJSONDecodes(t *testing.T) {
	for _, in := range []string{`""`, `"a|b"`, `"A\u003eB\u003EC"`, `"\"\\\/\b\f\n\r\t"`, `"\u0000\u001f\u007F"`, `"x\u0041y"`} {
		got, ok := Unescaped([]byte(in))
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil || !ok || got != want {
			t.Errorf("%s: Unescaped %q (%v), encoding/json %q (%v)", in, got, ok, want, err)
		}
	}
	for _, in := range []string{`"\u0080"`, `"\u00e9"`, `"\ud83d\ude00"`, `"é"`, "\"a\tb\"", `"\u00"`, `"\u00zz"`, `"\x"`, `"a\"`, `"`, `x`, `7`, `null`} {
		if got, ok := Unescaped([]byte(in)); ok {
			t.Errorf("%s: Unescaped took it as %q", in, got)
		}
	}
}

// Each walks an object's members in order, each value as written, nested
// brackets and quotes in strings skipped whole; anything but one object is
// refused.
func TestEachWalksMembersAsWritten(t *testing.T) {
	var got []string
	ok := Each([]byte(` {"a" : {"x":"}\"{","y":[1,{"z":"]"}]} ,"b":"q\\","c":-1.5e3,"d":[] } `), func(name, v []byte) bool {
		got = append(got, string(name)+"="+string(v))
		return true
	})
	want := []string{`a={"x":"}\"{","y":[1,{"z":"]"}]}`, `b="q\\"`, `c=-1.5e3`, `d=[]`}
	if !ok || len(got) != len(want) {
		t.Fatalf("Each: %v, %q", ok, got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("member %d: %s, want %s", i, got[i], want[i])
		}
	}
	for _, in := range []string{`[]`, `"x"`, `{"a":1} {}`, `{"a\u0062":1}`, `{"é":1}`} {
		if Each([]byte(in), func(_, _ []byte) bool { return true }) {
			t.Errorf("%s was walked as an object of plain names", in)
		}
	}
}

// Fields gives up on a field given twice and on a field's name in another
// case, and skips other members.
func TestFieldsGivesUpOnRepeatsAndOtherCases(t *testing.T) {
	names := []string{"key", "body"}
	set := func(name, v []byte) (int, bool) {
		switch string(name) {
		case "key":
			return 0, true
		case "body":
			return 1, true
		}
		return -1, false
	}
	for in, want := range map[string]bool{
		`{"key":"K","body":"b","other":1}`: true,
		`{"key":"K","key":"L"}`:            false,
		`{"Key":"K"}`:                      false,
		`{"BODY":"b","key":"K"}`:           false,
		`{"keys":"K"}`:                     true,
	} {
		if got := Fields([]byte(in), names, set); got != want {
			t.Errorf("%s: Fields %v, want %v", in, got, want)
		}
	}
}
