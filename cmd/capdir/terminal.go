package main

import (
	"io"
	"os"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/capdir/capdir/internal/visible"
)

// What capdir prints comes partly from others: a row's result (a token holder's
// arguments echoed, an upstream's answer), a receipt's body, an imported row's
// description, an upstream's error. Written to a terminal as they are, their
// control characters would drive it: clear the screen, set the window's title,
// move the cursor to overwrite a line with a fake one. So what goes to a terminal
// goes through a terminalWriter, which writes each such character as an escape
// (\x1b, \r, \u202e) and everything else as it is; output to a file or a pipe is
// left byte for byte as the server sent it, for scripts.

// guardTerminal makes root's commands write through a terminalWriter to stdout
// and stderr, each when it is a terminal.
func guardTerminal(root *cobra.Command, stdout, stderr *os.File) {
	if isTerminalFile(stdout) {
		root.SetOut(&terminalWriter{w: stdout, f: stdout})
	}
	if isTerminalFile(stderr) {
		root.SetErr(&terminalWriter{w: stderr, f: stderr})
	}
}

// terminalWriter writes to w with every control character escaped (see
// escapeControls). f is the terminal itself, for what draws on it on purpose
// (a progress bar's carriage return).
type terminalWriter struct {
	w       io.Writer
	f       *os.File
	pending []byte // the start of a UTF-8 sequence the last Write ended inside
	buf     []byte
}

func (t *terminalWriter) Write(p []byte) (int, error) {
	in := p
	if len(t.pending) > 0 {
		in = append(t.pending, p...)
		t.pending = nil
	}
	// A sequence cut by the end of p is kept for the next Write (at most
	// utf8.UTFMax-1 bytes), so that it is judged whole.
	cut := len(in)
	for i := len(in) - 1; i >= 0 && i >= len(in)-(utf8.UTFMax-1); i-- {
		if utf8.RuneStart(in[i]) {
			if !utf8.FullRune(in[i:]) {
				cut = i
			}
			break
		}
	}
	t.buf = escapeControls(t.buf[:0], in[:cut])
	t.pending = append(t.pending, in[cut:]...)
	if _, err := t.w.Write(t.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// escapeControls appends b to dst with every character that would drive a
// terminal (or reorder what it shows) escaped, as the console shows such text
// too (package visible).
func escapeControls(dst, b []byte) []byte { return visible.Append(dst, b) }

// terminalFile is the terminal w writes to, or nil: what a progress bar redraws
// on with a carriage return, past the terminalWriter's escapes.
func terminalFile(w any) *os.File {
	switch w := w.(type) {
	case *terminalWriter:
		return w.f
	case *os.File:
		if isTerminalFile(w) {
			return w
		}
	}
	return nil
}

func isTerminalFile(f *os.File) bool { return f != nil && term.IsTerminal(int(f.Fd())) }
