// Package wire is what a program needs to talk to capdir over NATS: the event
// envelope, the stream and subject names, the invocation request and receipt types,
// and [Invoke], a bus client's whole invocation. It depends on nats.go and nothing
// of capdir's server side (no NATS server, bbolt, Prometheus or JSON Schema
// compiler), so a bus caller stays light; a test checks that with go list -deps.
//
// # Envelope
//
// Every message on the log is a JSON [Event]: {id, type, at, actor, data}. The id is
// a ULID and is also sent as Nats-Msg-Id, so a retried append inside the stream's
// duplicate window is stored once. [Encode] and [Decode] have a direct path for the
// envelope's common form that gives exactly encoding/json's bytes and values.
//
// # Subjects
//
// capdir's own requests go to [RequestSubject](key) on the data stream, a bus
// client's to its own [BusRequestSubject](client, key), the steps of a flow or an
// agent to [StepSubject](key). The node whose worker wrote the receipt of a bus
// client's request announces it on [ReceiptNoticeSubject](client, key, invocation
// id), a plain NATS message outside the streams. Every stored subject ends with the
// row key (a revocation's, with the token id). [ParseSubject] splits a stored
// subject into its [Family] (which events it holds), bus client and key; the
// projector folds an event only if its type belongs to its subject's family, and
// the worker takes a request's sender from it.
package wire
