package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progressEvery is how many rows capdir import sends between two progress lines.
const progressEvery = 10000

// importProgress passes an import body through to the request, counting the rows
// it sends, and reports on w (stderr) every `every` rows, once the whole body is
// sent, and every `wait` while the server has not answered. A row is a top-level
// object of a JSON array, or a non-blank line of NDJSON.
type importProgress struct {
	r     io.Reader
	w     io.Writer
	every int64
	wait  time.Duration
	start time.Time

	array             bool // the body is a JSON array
	depth             int  // JSON nesting depth (arrays)
	inString, escaped bool // inside a JSON string (arrays)
	lineHasData       bool // NDJSON: the current line is not blank
	rows, bytes       int64

	// mu guards sent, closed and writing to w: the transport may still read the
	// body after the answer came back, when the command writes to w itself.
	mu     sync.Mutex
	sent   bool
	closed bool // finish has run: nothing more is written to w
	stop   chan struct{}
	done   sync.WaitGroup
}

func newImportProgress(r io.Reader, w io.Writer, array bool) *importProgress {
	return &importProgress{r: r, w: w, every: progressEvery, wait: 5 * time.Second, start: time.Now(), array: array, stop: make(chan struct{})}
}

// Read passes the body through and counts what it read.
func (p *importProgress) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.bytes += int64(n)
	for _, c := range b[:n] {
		if p.array {
			p.scanJSON(c)
		} else {
			p.scanLine(c)
		}
	}
	if err == io.EOF {
		if p.lineHasData {
			p.row()
			p.lineHasData = false
		}
		p.mu.Lock()
		if !p.sent && !p.closed {
			p.sent = true
			fmt.Fprintf(p.w, "import: sent all %s (%s) in %.1fs; the server validates and writes them, then answers\n",
				rowCount(p.rows), size(p.bytes), time.Since(p.start).Seconds())
		}
		p.mu.Unlock()
	}
	return n, err
}

func (p *importProgress) scanLine(c byte) {
	switch c {
	case '\n':
		if p.lineHasData {
			p.row()
		}
		p.lineHasData = false
	case ' ', '\t', '\r':
	default:
		p.lineHasData = true
	}
}

func (p *importProgress) scanJSON(c byte) {
	switch {
	case p.escaped:
		p.escaped = false
	case p.inString:
		switch c {
		case '\\':
			p.escaped = true
		case '"':
			p.inString = false
		}
	case c == '"':
		p.inString = true
	case c == '{' || c == '[':
		p.depth++
	case c == '}' || c == ']':
		p.depth--
		if p.depth == 1 && c == '}' {
			p.row()
		}
	}
}

func (p *importProgress) row() {
	p.rows++
	if p.rows%p.every == 0 {
		p.mu.Lock()
		if !p.closed {
			fmt.Fprintf(p.w, "import: sent %s (%s)\n", rowCount(p.rows), size(p.bytes))
		}
		p.mu.Unlock()
	}
}

// waitForAnswer reports every p.wait, once the body is sent, until finish.
func (p *importProgress) waitForAnswer() {
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		t := time.NewTicker(p.wait)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.mu.Lock()
				if p.sent {
					fmt.Fprintf(p.w, "import: waiting for the server's answer (%s so far)\n", time.Since(p.start).Round(time.Second))
				}
				p.mu.Unlock()
			}
		}
	}()
}

// finish stops the reports: after it nothing more is written to w.
func (p *importProgress) finish() {
	close(p.stop)
	p.done.Wait()
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}

func rowCount(n int64) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
}

func size(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
