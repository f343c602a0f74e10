package console

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
)

// The chart: calls per minute over the last hour, stacked by outcome, drawn on
// the server as SVG (no script, no style attribute).
const (
	chartMinutes = 60
	chartBarW    = 12
	chartGap     = 2
	chartH       = 120
)

var chartClasses = []string{"ok", "refused", "failed"}

// chart is the rendered SVG and its accessible summary.
type chart struct {
	SVG     template.HTML
	Summary string
}

// chart counts the receipts finished in the hour before now, per minute and class.
func (c *Console) chart(now time.Time) (chart, error) {
	start := now.Truncate(time.Minute).Add(-(chartMinutes - 1) * time.Minute)
	var counts [chartMinutes]map[string]int
	for i := range counts {
		counts[i] = map[string]int{}
	}
	totals := map[string]int{}
	_, err := c.cfg.Projector.RecentReceipts(0, receiptsScan, func(rc *wire.Receipt) bool {
		if i := int(rc.FinishedAt.Sub(start) / time.Minute); !rc.FinishedAt.Before(start) && i < chartMinutes {
			cl := statusClass(rc)
			counts[i][cl]++
			totals[cl]++
		}
		return false
	})
	if err != nil {
		return chart{}, unavailable(err)
	}
	peak := 1
	for _, m := range counts {
		if n := m["ok"] + m["refused"] + m["failed"]; n > peak {
			peak = n
		}
	}
	var b strings.Builder
	width := chartMinutes * (chartBarW + chartGap)
	fmt.Fprintf(&b, `<svg class="chart" id="chart" role="img" aria-labelledby="chart-title" viewBox="0 0 %d %d" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg">`,
		width, chartH+16, width, chartH+16)
	fmt.Fprintf(&b, `<title id="chart-title">Calls per minute since %s: %d ok, %d refused, %d failed (peak %d a minute)</title>`,
		start.UTC().Format("15:04Z"), totals["ok"], totals["refused"], totals["failed"], peak)
	for i, m := range counts {
		y := chartH
		for _, cl := range chartClasses {
			n := m[cl]
			if n == 0 {
				continue
			}
			h := max(n*chartH/peak, 1)
			y -= h
			fmt.Fprintf(&b, `<rect class="sw-%s" x="%d" y="%d" width="%d" height="%d"><title>%s: %d %s</title></rect>`,
				cl, i*(chartBarW+chartGap), y, chartBarW, h, start.Add(time.Duration(i)*time.Minute).UTC().Format("15:04Z"), n, cl)
		}
	}
	fmt.Fprintf(&b, `<line x1="0" y1="%d" x2="%d" y2="%d" stroke="#8c959f"/>`, chartH, width, chartH)
	fmt.Fprintf(&b, `<text x="0" y="%d" font-size="11">%s</text><text x="%d" y="%d" font-size="11" text-anchor="end">%s</text></svg>`,
		chartH+13, start.UTC().Format("15:04Z"), width, chartH+13, now.UTC().Format("15:04Z"))
	// Every value written above is a number or a time this function formatted.
	return chart{SVG: template.HTML(b.String()),
		Summary: fmt.Sprintf("%d ok, %d refused, %d failed in the last hour", totals["ok"], totals["refused"], totals["failed"])}, nil
}
