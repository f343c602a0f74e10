package main

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/internal/nodetest"
	"golang.org/x/sys/unix"
)

func TestEscapeControls(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text, é, 日本", "plain text, é, 日本"},
		{"lines\n\tindented", "lines\n\tindented"},
		{"\x1b[2J\x1b]0;title\x07", `\x1b[2J\x1b]0;title\x07`},
		{"real\rfake", `real\rfake`},
		{"\x00\x08\x7f", `\x00\x08\x7f`},
		{"\u009b31m", `\u009b31m`},                       // C1 CSI, as UTF-8
		{"\x9b31m", `\x9b31m`},                           // C1 CSI, a lone byte
		{"abc\u202eevil\u2066x", `abc\u202eevil\u2066x`}, // bidirectional override, isolate
	} {
		if got := string(escapeControls(nil, []byte(c.in))); got != c.want {
			t.Errorf("escapeControls(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A character cut between two writes is judged whole: a C1 control split in two
// is escaped, a letter split in two is written as it is.
func TestTerminalWriterJudgesACutCharacterWhole(t *testing.T) {
	var out bytes.Buffer
	w := &terminalWriter{w: &out}
	for _, p := range []string{"a\xc2", "\x9bb \xe6\x97", "\xa5 \x1b", "[0m"} {
		if n, err := w.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if got, want := out.String(), `a\u009bb 日 \x1b[0m`; got != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
}

// A row's result printed by invoke and receipt on the owner's terminal (a real
// one: a pseudo-terminal's) drives nothing: its control characters arrive as
// escapes; to a pipe or a file it is written as the server sent it.
func TestResultsOnATerminalArriveEscaped(t *testing.T) {
	n := nodetest.Start(t, nil)
	t.Setenv("CAPDIR_TERMINAL_KEY", nodetest.Key)
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", `{"key":"SAY","type":"fn","target":"echo","content":"# WHAT: say\n[\"$1\"]"}`); code != 201 {
		t.Fatalf("%d %s", code, body)
	}
	hostile := "\x1b[2J\x1b]0;pwned\x07\x1b[31mRED\rOK"
	raw := run(t, "invoke", "--server", n.URL(), "SAY", hostile)
	if !strings.HasPrefix(raw, hostile+"\n") {
		t.Fatalf("invoke to a buffer wrote %q; want the result as sent", raw)
	}
	inv := strings.Fields(strings.Split(raw, "\n")[1])[0]

	escaped := `\x1b[2J\x1b]0;pwned\x07\x1b[31mRED\rOK`
	for _, args := range [][]string{{"invoke", "--server", n.URL(), "SAY", hostile}, {"receipt", "--server", n.URL(), inv}} {
		got := onTerminal(t, args...)
		if strings.ContainsAny(got, "\x1b\x07") || !strings.Contains(got, escaped) {
			t.Fatalf("capdir %s on a terminal wrote %q; want the result as %s", args[0], got, escaped)
		}
	}
	// What goes to stderr (an error, a warning) is guarded alike; a file is not.
	_, pts := openPTY(t)
	cmd := rootCmd()
	guardTerminal(cmd, pts, pts)
	if _, ok := cmd.ErrOrStderr().(*terminalWriter); !ok {
		t.Fatalf("stderr on a terminal is a %T, not guarded", cmd.ErrOrStderr())
	}
	f, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd = rootCmd()
	guardTerminal(cmd, f, f)
	if cmd.OutOrStdout() != os.Stdout || cmd.ErrOrStderr() != os.Stderr {
		t.Fatalf("output to a file is guarded: %T, %T", cmd.OutOrStdout(), cmd.ErrOrStderr())
	}
}

// onTerminal runs capdir with args, its stdout and stderr a pseudo-terminal as
// main gives them (guardTerminal), and returns what the terminal received.
func onTerminal(t *testing.T, args ...string) string {
	t.Helper()
	ptm, pts := openPTY(t)
	cmd := rootCmd()
	guardTerminal(cmd, pts, pts)
	cmd.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	if err := cmd.ExecuteContext(ctx); err != nil {
		cmd.ErrOrStderr().Write([]byte("capdir: " + err.Error() + "\n"))
	}
	pts.Close()
	var out bytes.Buffer
	buf := make([]byte, 4096)
	for {
		ptm.SetReadDeadline(time.Now().Add(2 * time.Second))
		k, err := ptm.Read(buf)
		out.Write(buf[:k])
		if err != nil {
			break
		}
	}
	return out.String()
}

// openPTY opens a pseudo-terminal pair, raw (the terminal would otherwise turn
// each newline into a carriage return and a newline).
func openPTY(t *testing.T) (ptm, pts *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here (%v): the terminal's guard is tested by TestEscapeControls alone", err)
	}
	t.Cleanup(func() { ptm.Close() })
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	num, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err = os.OpenFile("/dev/pts/"+strconv.Itoa(num), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here (%v)", err)
	}
	t.Cleanup(func() { pts.Close() })
	tio, err := unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	tio.Oflag &^= unix.OPOST
	tio.Lflag &^= unix.ECHO | unix.ICANON
	if err := unix.IoctlSetTermios(int(pts.Fd()), unix.TCSETS, tio); err != nil {
		t.Fatal(err)
	}
	return ptm, pts
}
