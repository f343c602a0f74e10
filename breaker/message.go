package breaker

import (
	"strconv"

	"github.com/capdir/capdir/contract/failure"
)

// Failure is the literal refusal of a call to a key whose breaker is open, as the
// gate's failure table lists it. The dash is an em dash (U+2014).
var Failure = failure.Entry{
	Literal: "ERR:breaker_open:<KEY> \u2014 <threshold> consecutive auth failures; credential is dead until replaced.",
	Fault:   failure.FaultBreaker,
	Cause:   "the upstream's 401/403 answers opened the breaker",
	Fix:     "replace the credential, or run capdir breaker reset <KEY>",
}

// Message is the literal refusal for a call to key while its breaker is open. It is
// the only place the string is produced (from Failure). A threshold below 1 means
// DefaultThreshold, as in Config.
func Message(key string, threshold int) string {
	if threshold < 1 {
		threshold = DefaultThreshold
	}
	return Failure.Fill(key, strconv.Itoa(threshold))
}
