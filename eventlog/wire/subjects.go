package wire

// Stream names.
const (
	ControlStream = "CAPDIR_CONTROL"
	DataStream    = "CAPDIR_DATA"
)

// Subject prefixes. Every subject of the log ends with the row key, so per-key
// ordering comes from JetStream.
// Every one of them starts with capdirToken, which is why ReservedSubject refuses
// that first token to a row.
const (
	capdirToken     = "capdir"
	controlPrefix   = capdirToken + ".ctl."
	dataPrefix      = capdirToken + ".data."
	directoryPrefix = controlPrefix + "dir."
	breakerPrefix   = dataPrefix + "breaker."
	requestPrefix   = dataPrefix + "req."
	busPrefix       = dataPrefix + "bus."
	stepPrefix      = dataPrefix + "step."
	receiptPrefix   = dataPrefix + "rcpt."
	noticePrefix    = capdirToken + ".receipt."
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

// BusRequestSubject is where a bus client appends its invocation requests for one
// row: capdir.data.bus.<CLIENT>.<KEY>. The client token lets NATS permissions give
// each client a subject of its own.
func BusRequestSubject(client, key string) string { return busPrefix + client + "." + key }

// RequestSubjects matches every invocation request.
const RequestSubjects = requestPrefix + ">"

// StepSubject is where the requests of steps are appended: the invocations a
// composing row (a flow, an agent) makes on behalf of its call, which the worker
// running that call runs itself, inline. They are on the data stream like every
// request, so the projection shows a step pending until its receipt, and outside
// RequestSubjects, so no worker takes one from the queue. Only capdir writes here.
func StepSubject(key string) string { return stepPrefix + key }

// ReceiptSubject is where the receipts of one row are appended. The invocation id is
// in the receipt, not in the subject: the NATS server keeps state for every subject a
// stream holds, and a subject per invocation made that state grow with every call.
func ReceiptSubject(key string) string { return receiptPrefix + key }

// ReceiptSubjects matches every receipt.
const ReceiptSubjects = receiptPrefix + ">"

// ReceiptNoticeSubject is where a node announces one invocation's receipt once it is
// in the log, for a bus client waiting for it: a plain NATS message, outside the
// streams, carrying the same RECEIPT envelope. Subscribe before publishing the request.
func ReceiptNoticeSubject(key, invocationID string) string {
	return noticePrefix + key + "." + invocationID
}

// StreamSubjects are the subjects a stream holds.
func StreamSubjects(stream string) []string {
	if stream == ControlStream {
		return []string{controlPrefix + ">"}
	}
	return []string{dataPrefix + ">"}
}
