package httprunner

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
)

// BenchmarkHTTPRunnerParallel is the http runner with 64 calls in flight to one
// upstream, as 64 workers running rows of one API would.
func BenchmarkHTTPRunnerParallel(b *testing.B) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"ok":true}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	r, err := New(Config{Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		b.Fatal(err)
	}
	row := &contract.Row{Key: "B", Type: contract.TypeHTTP, Target: "GET " + srv.URL + "/x", Enabled: 1}
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if o := r.Run(context.Background(), runner.Call{Row: row}); !strings.HasPrefix(o.Result, "HTTP 200") {
				b.Error(o.Result)
				return
			}
		}
	})
	b.ReportMetric(float64(conns.Load()), "conns")
}
