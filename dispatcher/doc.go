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
// # Why a restart takes its calls back, and the ack wait stays long
//
// Two ways bring a crashed node's calls back sooner. A short ack wait, with
// workers telling JetStream that a call is in progress every third of it, hands
// a crashed node's calls to the others within the ack wait; but it also hands on
// the call of a live node whose progress came late, and that call then runs twice
// at once, before either receipt is in the log, so nothing can catch it. A
// progress comes late whenever a node is starved (a loaded machine, a long pause
// of the collector), reconnects after its server went away (seconds), or sends it
// while the consumer elects a leader (4 to 9 s measured, when progress goes
// nowhere): a 5 s ack wait would turn each of these into a double run. The ack
// wait stays 30 s instead, and a restarted node takes back only its own calls,
// and only when JetStream cannot have handed them on yet: the consumer's leader
// has led since before the delivery (so it holds the delivery as pending), and
// answers a claim on the delivery's acknowledgement subject before its ack wait
// could have ended. Then the restarted node holds the call exactly as the dead one
// did; a call it may not take is left to the ack wait, as before. Either way the
// call is first looked up for its receipt (runonce.go).
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
//     floor), so a call a crash cut runs at the next start. On a shared log the
//     consumer cannot tell them from the calls other nodes are running; the
//     workers record what they hold in the held file (ServiceConfig.HeldFile), and
//     the restarted node takes those back and runs them at once (held.go,
//     takeback.go). A request it may not take back (a leader election of the
//     consumer since its delivery, a request stored longer ago than AckWait less
//     the clocks' allowance, one delivered but not yet started, no record), and
//     every request of a node that does not come back, is another node's to take
//     after AckWait.
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
