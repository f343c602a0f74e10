package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/capdir/capdir/api"
	"github.com/capdir/capdir/eventlog/wire"
)

func (c *Console) registerReceipts() {
	c.mux.HandleFunc("GET /console/receipts", c.page(c.receiptsPage))
	c.mux.HandleFunc("GET /console/receipts/{id}", c.page(c.receiptPage))
	c.mux.HandleFunc("GET /console/events", c.events)
}

// Bounds of the receipts page.
const (
	receiptsShown = 100
	// receiptsScan bounds the receipts one list or chart reads.
	receiptsScan = 20000
)

// receiptFilter is the receipts page's query.
type receiptFilter struct {
	Key, Status, Actor string
	// Since is a number of minutes back ("" for any time).
	Since string
	since time.Time
}

// sinceChoices are the time filter's choices, in minutes.
var sinceChoices = []string{"5", "15", "60", "1440"}

func readReceiptFilter(q url.Values, now time.Time) (receiptFilter, error) {
	f := receiptFilter{Key: q.Get("key"), Status: q.Get("status"), Actor: q.Get("actor"), Since: q.Get("since")}
	if f.Since != "" {
		m, err := strconv.Atoi(f.Since)
		if err != nil || m < 1 || m > 60*24*366 {
			return f, badQuery("since must be a number of minutes from 1 to 527040")
		}
		f.since = now.Add(-time.Duration(m) * time.Minute)
	}
	return f, nil
}

func (f receiptFilter) keeps(rc *wire.Receipt) bool {
	return (f.Key == "" || rc.Key == f.Key) && (f.Status == "" || rc.Status == f.Status) &&
		(f.Actor == "" || rc.Actor == f.Actor) && (f.since.IsZero() || !rc.FinishedAt.Before(f.since))
}

type receiptsData struct {
	Filter   receiptFilter
	Receipts []wire.Receipt
	Statuses []string
	Since    []string
	Chart    chart
}

// receiptStatuses are the status filter's choices.
var receiptStatuses = []string{
	wire.StatusProvenMaterialResult, wire.StatusRanWithError, wire.StatusFailedBeforeRun, wire.StatusShapeOnly,
	wire.StatusRefusedUnknownKey, wire.StatusRefusedBreakerOpen, wire.StatusRefusedDisabled, wire.StatusRefusedPayloadTooLarge,
	wire.StatusRefusedBadRequest, wire.StatusRefusedToken, wire.StatusRefusedScope, wire.StatusRefusedContractChanged,
	wire.StatusRefusedInput, wire.StatusRefusedApprovalDenied, wire.StatusRefusedApprovalExpired,
}

// receiptsPage lists the newest receipts the filters admit, live, above a chart
// of the last hour's calls per minute by outcome.
func (c *Console) receiptsPage(w http.ResponseWriter, r *http.Request, ss *session) error {
	now := c.cfg.Clock()
	f, err := readReceiptFilter(r.URL.Query(), now)
	if err != nil {
		return err
	}
	rcs, err := c.cfg.Projector.RecentReceipts(receiptsShown, receiptsScan, f.keeps)
	if err != nil {
		return unavailable(err)
	}
	ch, err := c.chart(now)
	if err != nil {
		return err
	}
	c.render(w, "receipts", http.StatusOK, view{Title: "Receipts", Nav: "receipts", CSRF: ss.csrf, Notice: ss.notice,
		Data: receiptsData{Filter: f, Receipts: rcs, Statuses: receiptStatuses, Since: sinceChoices, Chart: ch}})
	return nil
}

// treeNode is one receipt of a call's tree, or a step without a receipt yet.
type treeNode struct {
	ID        string
	Receipt   *wire.Receipt
	Steps     []treeNode
	Truncated bool
}

func nodeOf(t *api.ReceiptTree) treeNode {
	n := treeNode{ID: t.InvocationID, Receipt: &t.Receipt, Truncated: t.StepsTruncated}
	for _, s := range t.Steps {
		switch s := s.(type) {
		case *api.ReceiptTree:
			n.Steps = append(n.Steps, nodeOf(s))
		case *api.PendingStep:
			n.Steps = append(n.Steps, treeNode{ID: s.InvocationID})
		}
	}
	return n
}

type receiptData struct {
	Tree    treeNode
	Public  string
	Pending bool
	ID      string
}

// receiptPage is a receipt as GET /api/receipts/{id} answers the owner: its
// fingerprints, its public link, and the tree of its steps.
func (c *Console) receiptPage(w http.ResponseWriter, r *http.Request, ss *session) error {
	id := r.PathValue("id")
	if !wire.ValidReceiptID(id) { // a bus client's scoped id too
		return badQuery(wire.CheckInvocationID(id).Error())
	}
	t, pending, err := c.cfg.API.Receipt(r.Context(), id)
	if err != nil {
		return err
	}
	d := receiptData{Pending: pending, ID: id, Public: c.cfg.API.PublicReceiptURL(id)}
	if t != nil {
		d.Tree = nodeOf(t)
	}
	c.render(w, "receipt", http.StatusOK, view{Title: "Receipt " + id, Nav: "receipts", CSRF: ss.csrf, Data: d})
	return nil
}

// statusClass is a status's outcome class: ok, refused or error.
func statusClass(rc *wire.Receipt) string {
	switch {
	case rc.OK:
		return "ok"
	case strings.HasPrefix(rc.Status, "REFUSED_"):
		return "refused"
	}
	return "failed"
}
