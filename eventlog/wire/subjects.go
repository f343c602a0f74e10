package wire

import (
	"strings"
	"sync"
)

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
	packPrefix      = dataPrefix + "pack."
	tokenPrefix     = controlPrefix + "token."
	noticePrefix    = capdirToken + ".receipt."
	callPrefix      = capdirToken + ".call."
)

// Streams lists both streams in the order projectors fold them.
var Streams = []string{ControlStream, DataStream}

// DirectorySubject is where mutations of one row are appended.
func DirectorySubject(key string) string { return directoryPrefix + key }

// DirectorySubjects matches every row's mutations.
const DirectorySubjects = directoryPrefix + ">"

// BreakerSubject is where owner resets of one row's breaker are appended. It is on the
// data stream, not the control stream, because a breaker is a fold over receipts and
// resets together: only one stream gives the two a total order, so that replay
// reproduces the live state exactly.
func BreakerSubject(key string) string { return breakerPrefix + key }

// RequestSubject is where capdir itself (the HTTP facade, the CLI through it) appends
// invocation requests for one row. Only capdir's own connections may publish here:
// a request on this subject is believed (its credential is capdir's attestation).
// Bus clients publish on BusRequestSubject instead.
func RequestSubject(key string) string { return subjectsOf(key).request }

// RequestSubjects matches every request capdir itself appended.
const RequestSubjects = requestPrefix + ">"

// BusRequestSubject is where the bus client named client publishes its invocation
// requests for one row: capdir.data.bus.<CLIENT>.<KEY>. The client's NATS
// permissions allow it this subject family only (BusClientSubjects), so the subject
// says who sent the request, whatever its body claims: a request here is never the
// owner's (see ParseSubject, BusRequestFamily).
func BusRequestSubject(client, key string) string { return busPrefix + client + "." + key }

// BusClientSubjects matches every request of one bus client: what its permissions
// let it publish.
func BusClientSubjects(client string) string { return busPrefix + client + ".>" }

// BusRequestSubjects matches every bus client's requests.
const BusRequestSubjects = busPrefix + ">"

// AllRequestSubjects are what a worker takes from the queue, and what the
// dispatcher's consumer filters: both request families, capdir's own and the bus
// clients', and the packs of capdir's own requests (RequestPackSubject). Step
// requests (StepSubject) are not among them: their caller's worker runs them.
var AllRequestSubjects = []string{RequestSubjects, BusRequestSubjects, RequestPackSubject}

// RequestPackSubject is where capdir appends a pack: several of its own requests
// (events of RequestSubject) appended at about the same time, carried in one
// message of the data stream, each with its own subject and its own bytes, as
// the log would have held it alone (see eventlog's packs). Only capdir's own
// connections may publish here, as on RequestSubject.
const RequestPackSubject = packPrefix + "req"

// ReceiptPackSubject is where capdir appends a pack of receipts (events of
// ReceiptSubject), as RequestPackSubject holds requests.
const ReceiptPackSubject = packPrefix + "rcpt"

// PackSubject is the subject of the pack that may carry an event appended on
// subject, and whether one may: only the requests and receipts a node appends
// itself are packed (its own requests, and the bus clients' calls its responder
// appends on their request subjects; a bus client's published request is its
// own message).
func PackSubject(subject string) (string, bool) {
	switch {
	case strings.HasPrefix(subject, requestPrefix), strings.HasPrefix(subject, busPrefix):
		return RequestPackSubject, true
	case strings.HasPrefix(subject, receiptPrefix):
		return ReceiptPackSubject, true
	}
	return "", false
}

// IsPackSubject reports whether subject is one where packs are appended.
func IsPackSubject(subject string) bool {
	return subject == RequestPackSubject || subject == ReceiptPackSubject
}

// StepSubject is where the requests of steps are appended: the invocations a
// composing row (a flow, an agent) makes on behalf of its call, which the worker
// running that call runs itself, inline. They are on the data stream like every
// request, so the projection shows a step pending until its receipt, and outside
// AllRequestSubjects, so no worker takes one from the queue. Only capdir writes here.
func StepSubject(key string) string { return stepPrefix + key }

// ReceiptSubject is where the receipts of one row are appended. The invocation id is
// in the receipt, not in the subject: the NATS server keeps state for every subject a
// stream holds, and a subject per invocation made that state grow with every call.
func ReceiptSubject(key string) string { return subjectsOf(key).receipt }

// keySubjects are the subjects every call of one key is appended on.
type keySubjects struct{ request, receipt string }

// subjectCache holds the keySubjects of up to maxCachedKeys keys called
// lately, so that a call does not build its subjects anew; a key new to a
// full cache takes the place of one it holds.
var subjectCache = struct {
	mu sync.RWMutex
	m  map[string]*keySubjects
}{m: map[string]*keySubjects{}}

const maxCachedKeys = 4096

func subjectsOf(key string) *keySubjects {
	subjectCache.mu.RLock()
	ks := subjectCache.m[key]
	subjectCache.mu.RUnlock()
	if ks != nil {
		return ks
	}
	ks = &keySubjects{request: requestPrefix + key, receipt: receiptPrefix + key}
	if !ValidKey(key) {
		return ks // never called again under a valid key's name
	}
	subjectCache.mu.Lock()
	if len(subjectCache.m) >= maxCachedKeys {
		for k := range subjectCache.m {
			delete(subjectCache.m, k)
			break
		}
	}
	// Its own copy of the key, inside its subject: the key given may be cut
	// from a larger string (a request's data), which the cache would keep.
	subjectCache.m[ks.receipt[len(receiptPrefix):]] = ks
	subjectCache.mu.Unlock()
	return ks
}

// ReceiptSubjects matches every receipt.
const ReceiptSubjects = receiptPrefix + ">"

// IsReceiptSubject reports whether subject is where the engine appends receipts.
func IsReceiptSubject(subject string) bool { return strings.HasPrefix(subject, receiptPrefix) }

// ReceiptNoticeSubject is where a node announces the receipt of one invocation a
// bus client requested, once it is in the log: a plain NATS message, outside the
// streams, carrying the same RECEIPT envelope. Subscribe before publishing the
// request. The subject starts with the client's name, so NATS permissions let each
// client read its own notices only (ReceiptNotices). An invocation id scoped to
// the client (ScopedInvocationID) is announced under the id the client chose.
func ReceiptNoticeSubject(client, key, invocationID string) string {
	return noticePrefix + client + "." + key + "." + ClientInvocationID(client, invocationID)
}

// ReceiptNotices matches every receipt notice of one bus client: what its
// permissions let it subscribe to.
func ReceiptNotices(client string) string { return noticePrefix + client + ".>" }

// ReceiptNoticeSubjects matches every receipt notice.
const ReceiptNoticeSubjects = noticePrefix + ">"

// StreamSubjects are the subjects a stream holds.
func StreamSubjects(stream string) []string {
	if stream == ControlStream {
		return []string{controlPrefix + ">"}
	}
	return []string{dataPrefix + ">"}
}
