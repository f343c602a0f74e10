package command

import (
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
)

// checkSecretEnv refuses an auth spec that names an environment variable rows may
// not read: one of capdir's own (runner.ReservedEnv), or one outside the operator's
// allow-list. The refusal is a *contract.ValidationError on auth, so every write
// route and the import answer it as any other invalid field (400, nothing written).
// A malformed spec is left to the runner, which refuses it at call time.
func checkSecretEnv(allow runner.SecretEnv, spec string) error {
	names, err := runner.AuthVariables(spec)
	if err != nil {
		return nil
	}
	for _, name := range names {
		switch {
		case runner.ReservedEnv(name):
			return &contract.ValidationError{Field: "auth", Err: contract.ErrInvalid, Problem: "names the environment variable " + name +
				", which is capdir's own (CAPDIR_*, or one the process reads itself): no row may read it, whatever --secret-env allows"}
		case !allow.Allows(name):
			list, want := allow.String(), name
			if list == "" {
				list = "none"
			} else {
				want = list + "," + name
			}
			return &contract.ValidationError{Field: "auth", Err: contract.ErrInvalid, Problem: "names the environment variable " + name +
				", which is not on the operator's allow-list (" + list + "); to allow it, start capdir serve with --secret-env '" + want +
				"' (or set CAPDIR_SECRET_ENV; patterns such as ACME_* and *_TOKEN are allowed)"}
		}
	}
	return nil
}
