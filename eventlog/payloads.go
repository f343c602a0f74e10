package eventlog

// BreakerReset is the data of a BREAKER_RESET event. The data of a
// DIRECTORY_MUTATE event is contract.DirectoryMutation: the log carries rows
// without knowing their shape.
type BreakerReset struct {
	Key string `json:"key"`
}
