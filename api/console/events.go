package console

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
)

// The topics a live page follows, by the events that change them.
const (
	topicRows      = "rows"
	topicReceipts  = "receipts"
	topicApprovals = "approvals"
	topicBreakers  = "breakers"
)

// topicsOf are the topics each event type changes.
var topicsOf = map[string][]string{
	wire.TypeDirectoryMutate:   {topicRows},
	wire.TypeReceipt:           {topicReceipts, topicBreakers, topicApprovals},
	wire.TypeApprovalRequested: {topicApprovals},
	wire.TypeApprovalDecided:   {topicApprovals},
	wire.TypeBreakerReset:      {topicBreakers},
}

// hub fans the projection's commits out to the live streams, as topic names: a
// page told of a change renders itself again through its own signed-in GET, so
// no event's content ever reaches a stream. Safe for concurrent use.
type hub struct {
	mu   sync.Mutex
	subs map[chan string]struct{}
	// gen counts the notices; a page carries the count it was rendered at, so a
	// stream opened after a change of its topics (between the render and the
	// subscription) is told of it at once instead of missing it.
	gen uint64
}

func newHub() *hub { return &hub{subs: map[chan string]struct{}{}} }

// applied is the projector's OnApplied hook: it must not block, so a stream that
// has not taken its last notice misses this one (it will refresh anyway).
func (h *hub) applied(_ string, batch []eventlog.Stored) {
	seen := map[string]bool{}
	for i := range batch {
		for _, t := range topicsOf[batch[i].Type] {
			seen[t] = true
		}
	}
	if len(seen) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gen++
	for ch := range h.subs {
		for t := range seen {
			select {
			case ch <- t:
			default:
			}
		}
	}
}

// subscribe adds a stream; missed reports whether a notice came after the
// count since (the one its page was rendered at).
func (h *hub) subscribe(since uint64) (ch chan string, missed bool) {
	ch = make(chan string, 8)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	missed = h.gen != since
	h.mu.Unlock()
	return ch, missed
}

// generation is the count of notices so far.
func (h *hub) generation() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gen
}

func (h *hub) unsubscribe(ch chan string) {
	h.mu.Lock()
	delete(h.subs, ch)
	h.mu.Unlock()
}

// Timings of a live stream.
const (
	// keepAlive is how often an idle stream sends a comment, so a dead browser is
	// noticed and proxies keep the connection.
	keepAlive = 15 * time.Second
	// streamWriteWait bounds each write to a stream (the server's write timeout
	// would otherwise end every stream after it).
	streamWriteWait = 30 * time.Second
)

// events is GET /console/events?topics=a,b&since=N: a server-sent event "change"
// whose data is the topic, each time the log brings a change of one of them, and
// one at once when a change came after N, the count the page was rendered at. The stream
// ends at its next notice or keep-alive once its session has ended (signed out,
// idled out, or pushed out by newer ones).
func (c *Console) events(w http.ResponseWriter, r *http.Request) {
	ss := c.signedIn(w, r)
	if ss == nil {
		writeRefusal(w, http.StatusUnauthorized, msgSignedOut)
		return
	}
	want := map[string]bool{}
	for _, t := range strings.Split(r.URL.Query().Get("topics"), ",") {
		switch t {
		case topicRows, topicReceipts, topicApprovals, topicBreakers:
			want[t] = true
		}
	}
	if len(want) == 0 {
		writeRefusal(w, http.StatusBadRequest, `{"error":"bad request","how_to_fix":"name topics: rows, receipts, approvals or breakers"}`)
		return
	}
	since, err := strconv.ParseUint(r.URL.Query().Get("since"), 10, 64)
	rc := http.NewResponseController(w)
	ch, missed := c.hub.subscribe(since)
	defer c.hub.unsubscribe(ch)
	missed = missed && err == nil // a stream that names no count is told of what comes
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	write := func(s string) bool {
		rc.SetWriteDeadline(time.Now().Add(streamWriteWait)) // I/O time, not the injected clock
		if _, err := fmt.Fprint(w, s); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write(": live\n\n") {
		return
	}
	if missed && !write("event: change\ndata: since\n\n") {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-c.closed:
			return
		case <-tick.C:
			if !c.sessions.alive(ss.id) || !write(": keep-alive\n\n") {
				return
			}
		case t := <-ch:
			if !c.sessions.alive(ss.id) || want[t] && !write("event: change\ndata: "+t+"\n\n") {
				return
			}
		}
	}
}
