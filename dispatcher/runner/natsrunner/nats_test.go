package natsrunner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
)

// startNATS runs an embedded server (no JetStream) and returns a connection to it.
func startNATS(t *testing.T) *nats.Conn {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
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
	return nc
}

func TestNATSRunner(t *testing.T) {
	nc := startNATS(t)
	if _, err := nc.Subscribe("svc.upper", func(m *nats.Msg) { m.Respond([]byte(strings.ToUpper(string(m.Data)))) }); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Subscribe("svc.silent", func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := New(Config{Conn: nc, Limits: runner.Limits{Timeout: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		row     contract.Row
		body    string
		want    string
		wantRan bool
		wantErr error
	}{
		{"raw body", contract.Row{Target: "svc.upper", Content: "# ARGS: text"}, "a|b", "A|B", true, nil},
		{"template", contract.Row{Target: " svc.upper ", Content: "# ARGS: a | b\n{\"a\":\"$1\",\"rest\":\"$2+\"}"},
			`x"|y|z`, `{"A":"X\"","REST":"Y|Z"}`, true, nil},
		{"no responders", contract.Row{Target: "svc.nobody"}, "", "ERR:nats:no_responders:svc.nobody", false, ErrNoResponders},
		{"timeout", contract.Row{Target: "svc.silent"}, "", "ERR:nats:timeout:svc.silent", false, ErrTimeout},
		{"empty subject", contract.Row{}, "", "ERR:nats:bad_target:empty_subject", false, ErrBadTarget},
		{"bad subject", contract.Row{Target: "svc bad"}, "", "ERR:nats:bad_target:whitespace:svc bad", false, ErrBadTarget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.row.Runner = runner.RunnerNATS
			o := r.Run(context.Background(), runner.Call{Row: &tt.row, Body: tt.body})
			if o.Result != tt.want || o.Ran != tt.wantRan {
				t.Errorf("got %q ran=%v, want %q ran=%v", o.Result, o.Ran, tt.want, tt.wantRan)
			}
			if tt.wantErr != nil && !errors.Is(o.Err, tt.wantErr) {
				t.Errorf("Err = %v, want %v", o.Err, tt.wantErr)
			}
		})
	}

	t.Run("shape", func(t *testing.T) {
		o := r.Run(context.Background(), runner.Call{Row: &contract.Row{Target: "svc.upper", Content: `["$1"]`}, Body: "q", Shape: true})
		if o.Result != `{"data":"[\"q\"]","shape":true,"subject":"svc.upper"}` || o.Ran {
			t.Errorf("shape = %+v", o)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		slow, _ := New(Config{Conn: nc, Limits: runner.Limits{Timeout: time.Minute}})
		o := slow.Run(ctx, runner.Call{Row: &contract.Row{Target: "svc.silent"}})
		if o.Result != "ERR:nats:canceled:context canceled" || !errors.Is(o.Err, runner.ErrCanceled) {
			t.Errorf("got %+v", o)
		}
	})
}

// A row whose target is NATS's own API, another caller's inbox or capdir's log, or
// not one literal subject, is refused before anything is published, plain or in
// shape mode: such a row can reach the runner without the write path's check (an
// old row, or one appended to the log by another writer).
func TestNATSRunnerRefusesReservedAndWildcardSubjects(t *testing.T) {
	nc := startNATS(t)
	var seen atomic.Int64
	spy, err := nc.Subscribe(">", func(m *nats.Msg) {
		seen.Add(1)
		m.Respond([]byte("answered"))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer spy.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := New(Config{Conn: nc, Limits: runner.Limits{Timeout: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		target, want string
		kind         error
	}{
		{"$JS.API.STREAM.DELETE.CAPDIR_CONTROL", "ERR:nats:reserved_subject:$JS.API.STREAM.DELETE.CAPDIR_CONTROL", ErrReservedSubject},
		{" $SYS.REQ.SERVER.PING ", "ERR:nats:reserved_subject:$SYS.REQ.SERVER.PING", ErrReservedSubject},
		{"$KV.cfg.k", "ERR:nats:reserved_subject:$KV.cfg.k", ErrReservedSubject},
		{"_INBOX.someone.1", "ERR:nats:reserved_subject:_INBOX.someone.1", ErrReservedSubject},
		{"capdir.data.req.GREET", "ERR:nats:reserved_subject:capdir.data.req.GREET", ErrReservedSubject},
		{"capdir.ctl.dir.GREET", "ERR:nats:reserved_subject:capdir.ctl.dir.GREET", ErrReservedSubject},
		{"svc.*", "ERR:nats:bad_target:wildcard:svc.*", ErrBadTarget},
		{"svc.>", "ERR:nats:bad_target:wildcard:svc.>", ErrBadTarget},
		{"svc..x", "ERR:nats:bad_target:empty_token:svc..x", ErrBadTarget},
	}
	for _, tt := range tests {
		for _, shape := range []bool{false, true} {
			row := &contract.Row{Key: "SMUGGLED", Type: "fn", Runner: runner.RunnerNATS, Target: tt.target}
			o := r.Run(context.Background(), runner.Call{Row: row, Body: "{}", Shape: shape})
			if o.Result != tt.want || o.Ran || o.Shape != nil || !errors.Is(o.Err, tt.kind) {
				t.Errorf("%q shape=%v: %+v, want %q", tt.target, shape, o, tt.want)
			}
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := seen.Load(); n != 0 {
		t.Fatalf("%d messages were published to refused subjects", n)
	}
}

func TestNATSConfigValidate(t *testing.T) {
	_, err := New(Config{Limits: runner.Limits{Timeout: -1, MaxResultBytes: -1, MaxSubstitutionBytes: -1}})
	for _, want := range []string{"Conn is required", "Timeout", "MaxResultBytes", "MaxSubstitutionBytes"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to mention %q", err, want)
		}
	}
}

func ExampleRunner() {
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		panic(err)
	}
	go s.Start()
	defer s.Shutdown()
	if !s.ReadyForConnections(5 * time.Second) {
		panic("nats-server not ready")
	}
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		panic(err)
	}
	defer nc.Close()

	// Any program that answers requests on a subject serves a capability.
	nc.Subscribe("geo.distance", func(m *nats.Msg) { m.Respond([]byte(`{"km":8.9,"req":` + string(m.Data) + `}`)) })
	nc.Flush()

	r, err := New(Config{Conn: nc, Limits: runner.Limits{Timeout: time.Second}})
	if err != nil {
		panic(err)
	}
	row := &contract.Row{Key: "GEO_DISTANCE", Type: "fn", Runner: "nats", Target: "geo.distance",
		Content: "# ARGS: from | to\n{\"from\":\"$1\",\"to\":\"$2\"}"}
	fmt.Println(r.Run(context.Background(), runner.Call{Row: row, Body: "SFO|OAK"}).Result)

	row = &contract.Row{Key: "GONE", Runner: "nats", Target: "nobody.home"}
	fmt.Println(r.Run(context.Background(), runner.Call{Row: row}).Result)
	// Output:
	// {"km":8.9,"req":{"from":"SFO","to":"OAK"}}
	// ERR:nats:no_responders:nobody.home
}
