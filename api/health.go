package api

import (
	"context"
	"net/http"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
)

type streamHealth struct {
	Log       uint64 `json:"log_last_seq"`
	Projected uint64 `json:"projected_seq"`
	Lag       uint64 `json:"lag"`
}

// healthz reports the log's and the projector's positions per stream. It answers
// 503 when the log does not answer.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	out := map[string]any{"ok": true}
	streams := map[string]streamHealth{}
	for _, name := range wire.Streams {
		last, err := s.cfg.Log.LastSeq(ctx, name)
		if err != nil {
			return &healthError{err}
		}
		applied := s.cfg.Projector.Applied(name)
		h := streamHealth{Log: last, Projected: applied}
		if last > applied {
			h.Lag = last - applied
		}
		streams[name] = h
		s.cfg.Metrics.setLag(name, h.Lag)
	}
	out["streams"] = streams
	out["rows"] = s.cfg.Projector.Count()
	writeJSON(w, http.StatusOK, out)
	return nil
}
