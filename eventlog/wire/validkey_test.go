package wire

import (
	"regexp"
	"strings"
	"testing"
)

var keyRegexp = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

func FuzzValidKeyMatchesPattern(f *testing.F) {
	for _, s := range []string{"", "A", "ZZ_TEST", "a-b_c9", "a.b", "a b", "a*", "a>", "é", "A\x00", strings.Repeat("k", 128), strings.Repeat("k", 129), "_", "-", "Ω"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidKey(s), keyRegexp.MatchString(s); got != want {
			t.Fatalf("ValidKey(%q) = %v, the pattern says %v", s, got, want)
		}
	})
}
