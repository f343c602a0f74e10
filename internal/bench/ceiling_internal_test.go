package bench

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkHTTPCeiling is net/http alone at 64 in flight, driven by the lean
// client as BenchmarkFnHTTP/par64-lean drives capdir: a handler that decodes a
// dispatch body with encoding/json's decoder (POST /api/dispatch parses the
// plain form by hand, for less) and answers a receipt's size of JSON, with nothing behind it (no log, no worker, no
// projection). Its rate is a ceiling for any dispatch served by net/http on the
// machine; compare it with the publish floor (BenchmarkPublishFloor) and with
// BenchmarkFnHTTP in the same session.
func BenchmarkHTTPCeiling(b *testing.B) {
	answer := []byte(`{"invocation_id":"inv_01m8s2xe6w2smrsr8k77ywwc6v","key":"` + EchoKey + `","status":"ok","result":"` +
		EchoBody + `","receipt":{"input_fingerprint":"` + strings.Repeat("ab", 32) + `","output_fingerprint":"` +
		strings.Repeat("cd", 32) + `","contract_fingerprint":"` + strings.Repeat("ef", 32) + `"}}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Key  string `json:"key"`
			Body string `json:"body"`
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil || in.Key != EchoKey {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	}))
	b.Cleanup(srv.Close)
	c, err := newRawClient(srv.URL, "/api/dispatch", "key", dispatchBody(), 256)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.close)
	op := rawInvoke(c)
	ctx := context.Background()
	if _, _, err := Drive(ctx, 200, Parallel, 0, op); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := CPUTime()
	lat, el, err := Drive(ctx, b.N, Parallel, 0, op)
	cpu := CPUTime() - cpu0
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	l := Summarize(lat)
	b.ReportMetric(float64(len(lat))/el.Seconds(), "inv/s")
	b.ReportMetric(float64(l.P99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/op")
}
