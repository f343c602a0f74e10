//go:build unix

package crashtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Build compiles cmd/capdir into dir and returns the binary's path.
func Build(ctx context.Context, dir string) (string, error) {
	return build(ctx, dir, "capdir", "github.com/capdir/capdir/cmd/capdir")
}

// BuildNATSServer compiles the nats-server of capdir's go.mod into dir and returns
// the binary's path.
func BuildNATSServer(ctx context.Context, dir string) (string, error) {
	return build(ctx, dir, "nats-server", "github.com/nats-io/nats-server/v2")
}

func build(ctx context.Context, dir, name, pkg string) (string, error) {
	bin := filepath.Join(dir, name)
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.CommandContext(ctx, goTool, "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}

// FreeAddr returns a loopback address no one listens on now. Every child of a test
// serves on the same one, so a client needs no new URL after a restart. The port
// is outside the range the kernel hands out to outgoing connections (where it
// says which: Linux), so that a server stopped for a while and started again on
// it (a cluster's outage, a node killed) does not find it taken by a connection
// made meanwhile, by this test or any other process; elsewhere it is one the
// kernel picked.
func FreeAddr() (string, error) {
	handedOut.mu.Lock()
	defer handedOut.mu.Unlock()
	lo, hi := quietPorts()
	var lastErr error
	for range 200 {
		addr := "127.0.0.1:0"
		if hi > lo {
			addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(lo+rand.IntN(hi-lo)))
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			if hi > lo {
				lastErr = err
				continue // held by someone: another one
			}
			return "", err
		}
		addr = ln.Addr().String()
		ln.Close()
		if !handedOut.addrs[addr] {
			handedOut.addrs[addr] = true
			return addr, nil
		}
	}
	if lastErr != nil {
		return "", fmt.Errorf("crashtest: no free loopback port in [%d, %d) in 200 tries; the last: %w", lo, hi, lastErr)
	}
	return "", errors.New("crashtest: no loopback port this process has not handed out already")
}

// quietPorts is the range [lo, hi) FreeAddr picks ports from: from 10000 up to
// the first port the kernel hands out to outgoing connections, read from
// /proc/sys/net/ipv4/ip_local_port_range; lo == hi when that cannot be read or
// leaves fewer than 1000 ports. Read once.
var quietPorts = sync.OnceValues(func() (lo, hi int) {
	const from = 10000
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0
	}
	first, err := strconv.Atoi(f[0])
	if err != nil || first-from < 1000 {
		return 0, 0
	}
	return from, first
})

// handedOut are the addresses FreeAddr returned: a port is closed before its
// user binds it, and the kernel may offer it again meanwhile, so a test that
// asks for several (a cluster's client and route ports) could be given one
// twice and find a server that never listens.
var handedOut = struct {
	mu    sync.Mutex
	addrs map[string]bool
}{addrs: map[string]bool{}}

// Server is one `capdir serve` child process (or a nats-server's: SpawnNATS).
type Server struct {
	URL     string
	LogPath string // its stderr

	cmd    *exec.Cmd
	exited chan struct{}
	err    error // Wait's result, once exited is closed
}

// Spawn starts `capdir serve` on dataDir with HTTP on addr and the owner key key;
// its stderr goes to logPath. extra are further serve flags.
func Spawn(bin, dataDir, addr, key, logPath string, extra ...string) (*Server, error) {
	return SpawnEnv(bin, dataDir, addr, key, logPath, nil, extra...)
}

// SpawnEnv is Spawn with env (NAME=value entries) added to the child's
// environment.
func SpawnEnv(bin, dataDir, addr, key, logPath string, env []string, extra ...string) (*Server, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := append([]string{"serve", "--data", dataDir, "--http", addr, "--log-level", "warn"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), "CAPDIR_TERMINAL_KEY="+key), env...)
	return start(cmd, logf, "http://"+addr)
}

// SpawnNATS starts the nats-server binary bin on the configuration file conf; its
// output goes to logPath. The Server's URL is empty.
func SpawnNATS(bin, conf, logPath string) (*Server, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	return start(exec.Command(bin, "-c", conf), logf, "")
}

func start(cmd *exec.Cmd, logf *os.File, url string) (*Server, error) {
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", filepath.Base(cmd.Path), err)
	}
	s := &Server{URL: url, LogPath: logf.Name(), cmd: cmd, exited: make(chan struct{})}
	go func() {
		s.err = cmd.Wait()
		logf.Close()
		close(s.exited)
	}()
	return s, nil
}

// Ready waits until GET /healthz answers 200. It fails when the process exits
// first or ctx ends.
func (s *Server) Ready(ctx context.Context) error {
	c := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if resp, err := c.Get(s.URL + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("capdir serve exited before it answered /healthz: %v\n%s", s.err, s.Tail(40))
		case <-ctx.Done():
			return fmt.Errorf("capdir serve did not answer /healthz: %w\n%s", ctx.Err(), s.Tail(40))
		case <-tick.C:
		}
	}
}

// Exited is closed once the process has exited.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// Kill sends SIGKILL and waits until the process is gone.
func (s *Server) Kill() error {
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	<-s.exited
	return nil
}

// Stop sends SIGTERM and waits for the process to exit; its exit status is the
// error (nil for a clean stop).
func (s *Server) Stop(ctx context.Context) error {
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-s.exited:
		return s.err
	case <-ctx.Done():
		s.Kill()
		return fmt.Errorf("%s did not stop on SIGTERM: %w", filepath.Base(s.cmd.Path), ctx.Err())
	}
}

// Tail is the last n lines the process wrote.
func (s *Server) Tail(n int) string {
	b, _ := os.ReadFile(s.LogPath)
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// Run runs a capdir command to its end and returns its stdout; a failure carries
// its stderr.
func Run(ctx context.Context, bin string, args ...string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("capdir %v: %w: %s", args, err, errb.String())
	}
	return out.String(), nil
}
