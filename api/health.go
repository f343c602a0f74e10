package api

import (
	"context"
	"net/http"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
)

// StreamHealth is one stream's positions: the log's last sequence, the one this
// node's projection has applied, and the difference.
type StreamHealth struct {
	Log       uint64 `json:"log_last_seq"`
	Projected uint64 `json:"projected_seq"`
	Lag       uint64 `json:"lag"`
}

// healthz reports the log's and the projector's positions per stream, to anyone:
// a liveness or readiness probe needs no key. The number of rows is the owner's:
// a request carrying the owner key gets it too ("rows"), one carrying another
// key is refused as on the owner's routes (401, counted against its address), so
// /healthz tells no one which key is right. It answers 503 when the log does not
// answer.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	owner := r.Header.Get("x-terminal-key") != ""
	if owner {
		if err := s.checkOwner(r); err != nil {
			return err
		}
	}
	streams, err := s.Health(r.Context())
	if err != nil {
		return err
	}
	out := map[string]any{"ok": true, "streams": streams}
	if owner {
		out["rows"] = s.cfg.Projector.Count()
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// Health is each stream's positions now, by stream name: GET /healthz and the
// console both read them here. It fails when the log does not answer within 2s.
func (s *Server) Health(ctx context.Context) (map[string]StreamHealth, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	streams := map[string]StreamHealth{}
	for _, name := range wire.Streams {
		last, err := s.cfg.Log.LastSeq(ctx, name)
		if err != nil {
			return nil, &healthError{err}
		}
		applied := s.cfg.Projector.Applied(name)
		h := StreamHealth{Log: last, Projected: applied}
		if last > applied {
			h.Lag = last - applied
		}
		streams[name] = h
		s.cfg.Metrics.setLag(name, h.Lag)
	}
	return streams, nil
}
