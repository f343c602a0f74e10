package main

import (
	"reflect"
	"testing"

	"github.com/capdir/capdir/dispatcher/runner"
)

// --secret-env is repeatable and comma-separated, wins over $CAPDIR_SECRET_ENV, and
// an empty value of either allows none; with neither, the default list applies.
func TestServeSecretEnv(t *testing.T) {
	envWith := func(v string, ok bool) func(string) (string, bool) {
		return func(name string) (string, bool) {
			if name != "CAPDIR_SECRET_ENV" {
				t.Fatalf("looked up %s", name)
			}
			return v, ok
		}
	}
	tests := []struct {
		args    []string
		env     func(string) (string, bool)
		want    []string
		allowed string
		refused string
	}{
		{nil, envWith("", false), runner.DefaultSecretEnv, "DEMO_API_KEY", "DB_PASSWORD"},
		{nil, envWith("DB_PASSWORD,ACME_*", true), []string{"DB_PASSWORD,ACME_*"}, "ACME_X", "DEMO_API_KEY"},
		{nil, envWith("", true), []string{""}, "", "DEMO_API_KEY"},
		{[]string{"--secret-env", "A_KEY,B_*", "--secret-env", "C"}, envWith("*", true), []string{"A_KEY", "B_*", "C"}, "B_X", "DEMO_API_KEY"},
		{[]string{"--secret-env="}, envWith("*", true), []string{}, "", "DEMO_API_KEY"},
		{[]string{"--secret-env", "*"}, envWith("", false), []string{"*"}, "DB_PASSWORD", "CAPDIR_TERMINAL_KEY"},
	}
	for _, tt := range tests {
		cmd := serveCmd()
		if err := cmd.ParseFlags(tt.args); err != nil {
			t.Fatal(err)
		}
		flag, _ := cmd.Flags().GetStringSlice("secret-env")
		got := secretEnvPatterns(cmd.Flags().Changed("secret-env"), flag, tt.env)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%v: patterns %q, want %q", tt.args, got, tt.want)
		}
		list, err := runner.ParseSecretEnv(got...)
		if err != nil {
			t.Fatal(err)
		}
		if tt.allowed != "" && !list.Allows(tt.allowed) || list.Allows(tt.refused) {
			t.Errorf("%v: %s allows %s=%v %s=%v", tt.args, list, tt.allowed, list.Allows(tt.allowed), tt.refused, list.Allows(tt.refused))
		}
	}
}
