package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The storage flags refuse what they cannot mean, naming the flag and what it
// takes, before the data dir is created.
func TestServeStorageFlagsRefuseHostileValues(t *testing.T) {
	t.Setenv("CAPDIR_TERMINAL_KEY", "")
	help := run(t, "serve", "--help")
	for _, f := range []string{"--log-compression", "--data-max-bytes", "--data-retention"} {
		if !strings.Contains(help, f) {
			t.Errorf("serve --help does not document %s", f)
		}
	}
	for _, tc := range []struct{ args, want []string }{
		{[]string{"--log-compression", "gzip"}, []string{`--log-compression must be "s2" or "none", got "gzip"`}},
		{[]string{"--log-compression", "S2"}, []string{`--log-compression must be "s2" or "none", got "S2"`}},
		{[]string{"--log-compression", "s2\x00none"}, []string{`--log-compression must be "s2" or "none", got "s2\x00none"`}},
		{[]string{"--data-max-bytes", "-1"}, []string{"--data-max-bytes must be 0 (no bound) or a number of bytes, got -1"}},
		{[]string{"--data-max-bytes", "10MB"}, []string{`invalid argument "10MB" for "--data-max-bytes"`}},
		{[]string{"--data-max-bytes", "99999999999999999999"}, []string{`invalid argument "99999999999999999999" for "--data-max-bytes"`}},
		{[]string{"--data-retention", "-1h"}, []string{"data retention must not be negative"}},
	} {
		dir := filepath.Join(t.TempDir(), "data")
		_, _, err := runCLI(t, "", append([]string{"serve", "--data", dir, "--http", "127.0.0.1:0", "--log-level", "error"}, tc.args...)...)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("serve %q: %v; want %q", tc.args, err, w)
			}
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("serve %q created %s before failing: %v", tc.args, dir, err)
		}
	}
}
