package natsrunner

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/dispatcher/runner/runnertest"
)

// conformanceResponders serve the conformance rows on a real embedded server (on a
// random port, with room for a reply over the default 1 MiB cap): rt.echo answers
// with the request data, rt.big with N bytes 'x', and rt.block never answers.
func conformanceResponders(t *testing.T) *nats.Conn {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true, MaxPayload: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(5 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	subs := map[string]nats.MsgHandler{
		"rt.echo":  func(m *nats.Msg) { m.Respond(m.Data) },
		"rt.big":   func(m *nats.Msg) { n, _ := strconv.Atoi(string(m.Data)); m.Respond([]byte(strings.Repeat("x", n))) },
		"rt.block": func(*nats.Msg) {},
	}
	for subject, h := range subs {
		if _, err := nc.Subscribe(subject, h); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return nc
}

func TestConformance(t *testing.T) {
	nc := conformanceResponders(t)
	row := func(subject, content string) *contract.Row {
		return &contract.Row{Key: "R", Type: contract.TypeFn, Runner: runner.RunnerNATS, Target: subject, Content: content}
	}
	secret := row("rt.echo", `{"args":"$1+","env":"$`+runnertest.SecretVar+`"}`)
	secret.Auth = "bearer:" + runnertest.SecretVar // the nats runner applies no credential
	runnertest.Run(t, runnertest.Harness{
		Name: runner.RunnerNATS,
		New: func(t testing.TB, cfg runnertest.Config) runner.Runner {
			r, err := New(Config{Conn: nc, Limits: cfg.Limits})
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
		Echo:     row("rt.echo", ""),
		Block:    row("rt.block", ""),
		Large:    row("rt.big", "# ARGS: n\n$1"),
		Secrets:  []*contract.Row{secret},
		Amplify:  []*contract.Row{row("rt.echo", `["`+strings.Repeat("$1", 1000)+`"]`)},
		Failures: []*contract.Row{row("rt.nobody", ""), row("", ""), row("rt bad", ""), row("$JS.API.INFO", "")},
		Elsewhere: map[string]string{
			"ERR:nats:timeout:<subject>":           "TestNATSRunner",
			"ERR:nats:request:<subject>:<message>": "none: a request failure of no other kind (a closed connection)",
		},
		Sentinels:     []error{ErrBadTarget, ErrReservedSubject, ErrNoResponders, ErrTimeout, ErrRequest},
		Timeout:       ErrTimeout,
		TimeoutPrefix: "ERR:nats:timeout:",
	})
}
