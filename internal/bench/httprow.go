package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"
)

// HTTPRow measures an http row against a local upstream, compared with calling the
// upstream directly and with the fn echo row over the same path. The three calls
// are interleaved, one of each per round, so machine noise touches them alike.
func HTTPRow(ctx context.Context, e *Env, n int, budget time.Duration) ([]Result, error) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("content-type", "application/json")
		io.WriteString(w, `{"pong":true}`)
	}))
	defer up.Close()
	err := e.CreateRow(ctx, map[string]any{
		"key": HTTPKey, "type": "http", "target": "GET " + up.URL + "/ping",
		"content": "# WHAT: pings a local upstream (benchmark row)",
	})
	if err != nil && !strings.Contains(err.Error(), "exists") {
		return nil, err
	}
	direct := func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, "GET", up.URL+"/ping", nil)
		resp, err := e.Client.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("bench: upstream status %d", resp.StatusCode)
		}
		return nil
	}
	viaRow := func(ctx context.Context) error {
		out, err := e.Dispatch(ctx, HTTPKey, "", http.StatusOK)
		if err == nil && !strings.Contains(string(out), `HTTP 200:{\"pong\":true}`) {
			err = fmt.Errorf("bench: http row answered %s", out)
		}
		return err
	}
	fnRow := e.HTTPInvoke()
	var dLat, hLat, fLat []time.Duration
	round := func(ctx context.Context, i int) error {
		for _, c := range []struct {
			f   func(context.Context) error
			lat *[]time.Duration
		}{{direct, &dLat}, {viaRow, &hLat}, {func(ctx context.Context) error { return fnRow(ctx, i) }, &fLat}} {
			t := time.Now()
			if err := c.f(ctx); err != nil {
				return err
			}
			*c.lat = append(*c.lat, time.Since(t))
		}
		return nil
	}
	if err := warmup(ctx, max(100, n/10), 1, round); err != nil {
		return nil, fmt.Errorf("bench: httprow warm-up: %w", err)
	}
	dLat, hLat, fLat = nil, nil, nil
	_, el, err := Drive(ctx, n, 1, budget, round)
	if err != nil {
		return nil, fmt.Errorf("bench: httprow: %w", err)
	}
	d, h, f := Summarize(dLat), Summarize(hLat), Summarize(fLat)
	dr := Result{Scenario: ScenarioHTTPRow, Name: "upstream called directly", Unit: "requests", Ops: len(dLat), Seconds: el.Seconds(), P50: d.P50, P90: d.P90, P99: d.P99}
	hr := Result{Scenario: ScenarioHTTPRow, Name: "http row via POST /api/dispatch", Unit: "invocations", Ops: len(hLat), Seconds: el.Seconds(), P50: h.P50, P90: h.P90, P99: h.P99}
	fr := Result{Scenario: ScenarioHTTPRow, Name: "fn row via POST /api/dispatch (same rounds)", Unit: "invocations", Ops: len(fLat), Seconds: el.Seconds(), P50: f.P50, P90: f.P90, P99: f.P99}
	addP50, addP99 := h.P50-d.P50, h.P99-d.P99
	runP50 := h.P50 - f.P50
	hr.Note = fmt.Sprintf("adds %s p50, %s p99 over direct; the runner's share (http row - fn row) %s p50", msCell(addP50), msCell(addP99), msCell(runP50))
	hr.Values = map[string]float64{"added_p50_ms": ms(addP50), "added_p99_ms": ms(addP99), "runner_p50_ms": ms(runP50)}
	return []Result{dr, hr, fr}, nil
}
