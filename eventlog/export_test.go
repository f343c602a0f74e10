package eventlog

// Unanswered is an append whose acknowledgement never comes, for a test that
// stands in for the stream.
func Unanswered() *Pending { return &Pending{} }

// PendingAppends is how many of l's async appends await their acknowledgement.
func (l *Log) PendingAppends() int { return l.pl.pending() }
