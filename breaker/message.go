package breaker

import "strconv"

// Message is the literal refusal for a call to key while its breaker is open. It is
// the only place the string is produced. A threshold below 1 means DefaultThreshold,
// as in Config. The dash is an em dash (U+2014).
func Message(key string, threshold int) string {
	if threshold < 1 {
		threshold = DefaultThreshold
	}
	return "ERR:breaker_open:" + key + " \u2014 " + strconv.Itoa(threshold) +
		" consecutive auth failures; credential is dead until replaced."
}
