package api_test

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/command"
	"github.com/capdir/capdir/internal/nodetest"
)

// genRows is an import body made as it is read: n rows of about size bytes each,
// NDJSON or a JSON array, so that the test itself holds none of it. When pace is
// set, it gives at most genPaceBytes per tick.
type genRows struct {
	n, i, size int
	array      bool
	buf        []byte
	pace       <-chan time.Time
	credit     int
}

const genPaceBytes = 64 << 10

func (g *genRows) row(i int) []byte {
	typ := "lambda" // refused by validation: the row fails and nothing is appended
	if i%genValidEvery == 0 {
		typ = "fn"
	}
	pad := strings.Repeat("x", g.size-120)
	return fmt.Appendf(nil, `{"key":"MEM_%07d","type":"%s","target":"echo","content":"# WHAT: generated row %07d.\n# EX: %s"}`, i, typ, i, pad)
}

// genValidEvery: one row in this many is valid and appended.
const genValidEvery = 50

func (g *genRows) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		switch {
		case g.i > g.n:
			return 0, io.EOF
		case g.i == g.n:
			g.buf = []byte("\n")
			if g.array {
				g.buf = []byte("]\n")
			}
		default:
			sep := "\n"
			if g.array {
				sep = ","
				if g.i == 0 {
					sep = "["
				}
			}
			if !g.array && g.i == 0 {
				sep = ""
			}
			g.buf = append([]byte(sep), g.row(g.i)...)
		}
		g.i++
	}
	if g.pace != nil {
		if g.credit <= 0 {
			<-g.pace
			g.credit = genPaceBytes
		}
		p = p[:min(len(p), g.credit)]
		g.credit -= min(len(p), len(g.buf))
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// heapPeak samples the live heap (HeapInuse right after a collection) until stop
// is called, and returns the highest sample.
func heapPeak() (stop func() uint64) {
	var (
		peak uint64
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	sample := func() {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				sample()
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}

// An import streams its rows: the live heap while a 40 MiB body is imported stays
// well under the body's size, in both forms (the array is spooled to a file). Most
// rows are refused by validation, each a failure in the answer, and one in 50 is
// appended: the embedded NATS server runs in this process and keeps the blocks it
// has just written in memory (16 MiB buffers, for 10 s), which would measure the
// server's cache rather than the import.
func TestImportStreamsRowsInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 80 MB")
	}
	const rows, size = 5000, 8 << 10 // 40 MiB
	for _, array := range []bool{false, true} {
		t.Run(fmt.Sprintf("array=%v", array), func(t *testing.T) {
			n := nodetest.Start(t, nil)
			// One row first, so that the log's store has the buffer of the block
			// the import will write to before the baseline is measured.
			mustDo(t, n, http.StatusCreated, "POST", "/api/directory", `{"key":"WARM","type":"fn"}`)
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			base := ms.HeapInuse
			stop := heapPeak()
			// The body arrives at 16 MiB/s: the live heap is sampled after a
			// collection, and what the import allocates during the collection
			// counts as live; a slower import keeps that part small.
			pace := time.NewTicker(4 * time.Millisecond)
			defer pace.Stop()
			req, err := http.NewRequest("POST", n.URL()+"/api/directory/import", &genRows{n: rows, size: size, array: array, pace: pace.C})
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("x-terminal-key", nodetest.Key)
			start := time.Now()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			peak := stop()
			var res command.ImportResult
			decode(t, string(body), &res)
			valid := (rows + genValidEvery - 1) / genValidEvery
			if resp.StatusCode != 200 || res.OK != valid || len(res.Failed) != rows-valid ||
				!strings.HasPrefix(res.Failed[0].Error, "type: must be one of") || res.Failed[0].Key != "MEM_0000001" {
				t.Fatalf("HTTP %d %.300s", resp.StatusCode, body)
			}
			grew := int64(peak) - int64(base)
			t.Logf("%d MiB imported in %v; live heap %d MiB before, at most %+d MiB during", rows*size>>20, time.Since(start).Round(time.Millisecond), base>>20, grew>>20)
			// A streaming import holds a few rows and the failures' list (10–25 MiB
			// measured, depending on the machine's load and so on when the collector
			// runs); one that reads its body whole holds all of it and more (44–75 MiB
			// measured).
			if limit := int64(rows * size * 3 / 4); grew > limit {
				t.Fatalf("the live heap grew by %d MiB importing %d MiB; want under %d MiB", grew>>20, rows*size>>20, limit>>20)
			}
		})
	}
}

// At most Config.MaxImports imports run at once: one more is refused at once with
// 429 and Retry-After, before its body is read, and appends nothing; the slot is
// free again when the running import ends.
func TestImportConcurrencyBound(t *testing.T) {
	n := nodetest.Start(t, func(c *capdir.Config) { c.API.MaxImports = 1 })
	importReq := func(body io.Reader) *http.Request {
		req, err := http.NewRequest("POST", n.URL()+"/api/directory/import", body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("x-terminal-key", nodetest.Key)
		req.Header.Set("content-type", "application/x-ndjson")
		return req
	}

	// The first import takes the only slot; its body arrives in two parts.
	pr, pw := io.Pipe()
	defer pw.Close()
	type answer struct {
		status int
		body   string
		err    error
	}
	first := make(chan answer, 1)
	go func() {
		resp, err := http.DefaultClient.Do(importReq(pr))
		if err != nil {
			first <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		first <- answer{resp.StatusCode, string(b), err}
	}()
	// (Its first row fails validation: nothing is appended while the second runs.)
	if _, err := io.WriteString(pw, `{"key":"FIRST_1","type":"lambda"}`+"\n"); err != nil {
		t.Fatal(err)
	}

	// Another import is refused once the first holds the slot. (Until then it runs:
	// its one row fails validation, so it appends nothing either way.)
	deadline := time.Now().Add(30 * time.Second)
	for {
		before := nodetest.ControlSeq(t, n)
		resp, err := http.DefaultClient.Do(importReq(strings.NewReader(`{"key":"SECOND","type":"lambda"}`)))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := nodetest.ControlSeq(t, n); got != before {
			t.Fatalf("the second import appended %d events", got-before)
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			var e struct{ Error string }
			decode(t, string(b), &e)
			if !strings.HasPrefix(e.Error, "too_many_imports: this node already runs as many imports as it allows at once (1, capdir serve --max-imports)") ||
				resp.Header.Get("Retry-After") == "" || !resp.Close {
				t.Fatalf("refusal: %s, Retry-After %q, Connection: close %v", b, resp.Header.Get("Retry-After"), resp.Close)
			}
			break
		}
		select {
		case a := <-first:
			t.Fatalf("the first import ended before its body did: %v HTTP %d %s", a.err, a.status, a.body)
		default:
		}
		if resp.StatusCode != http.StatusOK || time.Now().After(deadline) {
			t.Fatalf("a second import while the first runs: HTTP %d %s", resp.StatusCode, b)
		}
		time.Sleep(10 * time.Millisecond)
	}

	// The first import finishes; the slot is free again.
	if _, err := io.WriteString(pw, `{"key":"FIRST_2","type":"fn"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	a := <-first
	if a.err != nil || a.status != http.StatusOK || !strings.HasPrefix(a.body, `{"ok":1,"failed":[{"index":0,"line":1,"key":"FIRST_1","error":"type: must be one of`) {
		t.Fatalf("first import: %v HTTP %d %s", a.err, a.status, a.body)
	}
	status, body := send(t, n, "POST", "/api/directory/import", "application/x-ndjson", `{"key":"THIRD","type":"fn","target":"echo"}`)
	if status != http.StatusOK || strings.TrimSpace(body) != `{"ok":1,"failed":[]}` {
		t.Fatalf("an import after the first ended: HTTP %d %s", status, body)
	}
}

// The import body has its own cap (Config.MaxImportBody): a body declared over it
// is refused before it is read; an NDJSON body sent without a length that passes
// it keeps the rows before that point and says so; an array is refused whole.
func TestImportBodyCap(t *testing.T) {
	n := nodetest.Start(t, func(c *capdir.Config) { c.API.MaxImportBody = 64 << 10 })
	rows := func(prefix string) []string {
		var lines []string
		for i := range 2000 {
			lines = append(lines, fmt.Sprintf(`{"key":"%s_%04d","type":"fn","target":"now"}`, prefix, i))
		}
		return lines
	}
	ndjson := func(prefix string) string { return strings.Join(rows(prefix), "\n") }
	array := "[" + strings.Join(rows("ARRAY"), ",") + "]"
	cases := []struct {
		name, body  string
		chunked     bool
		wantPrefix  string
		wantWritten bool
	}{
		{"declared", ndjson("DECLARED"), false, fmt.Sprintf("payload_too_large: the import body is %d bytes; the limit is 65536; split the rows into several imports", len(ndjson("DECLARED"))), false},
		{"ndjson, chunked", ndjson("NDJSON"), true, "payload_too_large: the import body is more than 65536 bytes; the limit is 65536; the rows before that point were imported", true},
		{"array, chunked", array, true, "payload_too_large: the import body is more than 65536 bytes; the limit is 65536", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := nodetest.ControlSeq(t, n)
			var rd io.Reader = strings.NewReader(tc.body)
			if tc.chunked {
				rd = io.MultiReader(rd)
			}
			req, _ := http.NewRequest("POST", n.URL()+"/api/directory/import", rd)
			req.Header.Set("x-terminal-key", nodetest.Key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var res command.ImportResult
			decode(t, string(b), &res)
			written := int(nodetest.ControlSeq(t, n) - before)
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.HasPrefix(res.Error, tc.wantPrefix) ||
				(written > 0) != tc.wantWritten || res.OK != written {
				t.Fatalf("HTTP %d %.300s; %d rows written", resp.StatusCode, b, written)
			}
		})
	}
}
