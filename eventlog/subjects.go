package eventlog

// Stream names.
const (
	ControlStream = "CAPDIR_CONTROL"
	DataStream    = "CAPDIR_DATA"
)

// Subject prefixes. Every subject ends with the row key (and, for receipts, the
// invocation id), so per-key ordering comes from JetStream.
const (
	controlPrefix   = "capdir.ctl."
	dataPrefix      = "capdir.data."
	directoryPrefix = controlPrefix + "dir."
	breakerPrefix   = dataPrefix + "breaker."
	requestPrefix   = dataPrefix + "req."
	receiptPrefix   = dataPrefix + "rcpt."
)

// Streams lists both streams in the order projectors fold them.
var Streams = []string{ControlStream, DataStream}

// DirectorySubject is where mutations of one row are appended.
func DirectorySubject(key string) string { return directoryPrefix + key }

// BreakerSubject is where owner resets of one row's breaker are appended. It is on the
// data stream, not the control stream, because a breaker is a fold over receipts and
// resets together: only one stream gives the two a total order, so that replay
// reproduces the live state exactly.
func BreakerSubject(key string) string { return breakerPrefix + key }

// RequestSubject is where invocation requests for one row are appended. NATS clients
// publish INVOCATION_REQUESTED envelopes here.
func RequestSubject(key string) string { return requestPrefix + key }

// RequestSubjects matches every invocation request.
const RequestSubjects = requestPrefix + ">"

// ReceiptSubject is where the receipt of one invocation is appended.
func ReceiptSubject(key, invocationID string) string {
	return receiptPrefix + key + "." + invocationID
}

// ReceiptSubjects matches every receipt; ReceiptSubjectFor matches one invocation's.
const ReceiptSubjects = receiptPrefix + ">"

// ReceiptSubjectFor matches the receipt of one invocation whatever its key.
func ReceiptSubjectFor(invocationID string) string { return receiptPrefix + "*." + invocationID }

func streamSubjects(stream string) []string {
	if stream == ControlStream {
		return []string{controlPrefix + ">"}
	}
	return []string{dataPrefix + ">"}
}
