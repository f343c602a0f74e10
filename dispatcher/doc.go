// Package dispatcher is the service that runs invocations: the JetStream workers
// (competing consumers of one durable consumer on every node), the waiters that hand
// a receipt to the caller who asked, receipts and their fingerprints, and stopping
// and draining.
//
// A request passes the gate (package gate) before any runner (package runner and its
// sub-packages) runs; whatever happens, the worker appends exactly one receipt for
// the invocation id and only then acknowledges the request, so a crash before the
// receipt means a redelivery and a crash after it means the redelivery finds the
// receipt and does not run again. One exception: a call the gate holds for the
// owner's approval (a sensitive row, a caller other than the owner) is acknowledged
// with an APPROVAL_REQUESTED event and no receipt; its one receipt comes with the
// decision, the approved run, or the expiry (approval.go).
//
// A runner that composes other rows (flow, agent) runs them through its call's
// runner.Invoker (sub.go): each step is a real invocation with its own request
// event (on wire.StepSubject), the parent's gate and credential, and its own
// receipt naming the parent, run inline in the parent's worker; its invocation id
// derives from the parent's, so a redelivered parent reuses the steps that
// completed. Cycles and nesting past MaxDepth are refused.
//
// The clock, the credential environment and the logger are injected through
// ServiceConfig (time.Now, os.LookupEnv and slog.Default when unset).
//
// # Caveats
//
//   - Receipts are deduplicated by an event id derived from the invocation id, inside
//     the data stream's duplicate window; outside it, the redelivery check against
//     the projection is what keeps one receipt per invocation.
//   - A request held by a worker is kept in progress every third of AckWait; a run
//     longer than RunTimeout is cancelled.
//   - Drain lets calls in flight finish and NAKs the requests delivered to this
//     service but not started. A request the server was sending to this service as
//     it stopped pulling reaches nobody, and is redelivered after AckWait.
//   - On a log no other node shares, Start hands back at once the requests an
//     earlier process held when it died (the consumer reset to its acknowledgement
//     floor), so a call a crash cut runs at the next start. On a shared log they
//     are another node's to take after AckWait.
//   - A call cut short by Stop, or by Drain past its context, gets no receipt: it
//     is run again, so its upstream may see it twice. Exactly one receipt is kept
//     per invocation, never more.
//   - A step cut short by a stop gets no receipt and runs again with its parent;
//     a step that completed is reused, never run again, as long as the parent asks
//     for it with the same key and body (an agent whose model chooses another tool
//     the second time fails instead). Steps run inline, so a fan-out's branches
//     run at once in one worker, and nothing bounds a call tree's total steps but
//     the flow runner's bounds and MaxDepth.
//   - Receipt sizes are counted JSON-encoded, as the event carries them; a receipt
//     the log still refuses for good is replaced by a small failure receipt
//     (ERR:receipt:too_large:<bytes>) rather than run again.
package dispatcher
