package eventlog_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

var now = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

func TestAddListRemoveBusClients(t *testing.T) {
	dir := t.TempDir()
	c, seedPath, err := eventlog.AddBusClient(dir, eventlog.BusClient{Name: "billing", Role: eventlog.RoleClient}, now)
	if err != nil {
		t.Fatal(err)
	}
	if seedPath != eventlog.BusSeedPath(dir, "billing") || !nkeys.IsValidPublicUserKey(c.PublicKey) || !c.CreatedAt.Equal(now) {
		t.Fatalf("added %+v, seed %s", c, seedPath)
	}
	// The seed is the client's secret: owner-only, and it signs as the recorded key.
	st, err := os.Stat(seedPath)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("seed file mode %v, %v; want 0600", st.Mode(), err)
	}
	if st, err := os.Stat(eventlog.BusDir(dir)); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("bus dir mode %v, %v; want 0700", st.Mode(), err)
	}
	seed, _ := os.ReadFile(seedPath)
	kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(seed))))
	if err != nil {
		t.Fatal(err)
	}
	if pub, _ := kp.PublicKey(); pub != c.PublicKey {
		t.Fatalf("the seed's key %s is not the recorded %s", pub, c.PublicKey)
	}
	// The record holds no secret: neither the seed nor any field but the public ones.
	rec, _ := os.ReadFile(filepath.Join(eventlog.BusDir(dir), "billing.json"))
	var fields map[string]any
	if err := json.Unmarshal(rec, &fields); err != nil {
		t.Fatal(err)
	}
	for f := range fields {
		if f != "name" && f != "public_key" && f != "role" && f != "created_at" && f != "serve" {
			t.Fatalf("the record has a field %q: %s", f, rec)
		}
	}
	if strings.Contains(string(rec), strings.TrimSpace(string(seed))) {
		t.Fatalf("the record holds the seed: %s", rec)
	}
	if _, _, err := eventlog.AddBusClient(dir, eventlog.BusClient{Name: "billing", Role: eventlog.RoleClient}, now); !errors.Is(err, eventlog.ErrBusClientExists) {
		t.Fatalf("second add: %v", err)
	}
	if _, _, err := eventlog.AddBusClient(dir, eventlog.BusClient{Name: "geo", Role: eventlog.RoleService, Serve: []string{"geo.>", "svc.*.distance"}}, now); err != nil {
		t.Fatal(err)
	}
	got, err := eventlog.BusClients(dir)
	if err != nil || len(got) != 2 || got[0].Name != "billing" || got[1].Name != "geo" || got[1].Serve[1] != "svc.*.distance" {
		t.Fatalf("list: %+v, %v", got, err)
	}
	if err := eventlog.RemoveBusClient(dir, "billing"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(seedPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the seed outlived its record: %v", err)
	}
	if err := eventlog.RemoveBusClient(dir, "billing"); !errors.Is(err, eventlog.ErrNoBusClient) {
		t.Fatalf("second remove: %v", err)
	}
	if err := eventlog.RemoveBusClient(dir, "../x"); !errors.Is(err, wire.ErrBadClient) {
		t.Fatalf("remove ../x: %v", err)
	}
	// A data dir without any is an empty list.
	if got, err := eventlog.BusClients(t.TempDir()); err != nil || len(got) != 0 {
		t.Fatalf("empty dir: %v, %v", got, err)
	}
}

func TestAddBusClientRefuses(t *testing.T) {
	tests := []struct {
		name string
		c    eventlog.BusClient
		says string
	}{
		{"a name with a dot", eventlog.BusClient{Name: "a.b", Role: eventlog.RoleClient}, "must be 1 to 64 characters"},
		{"a path", eventlog.BusClient{Name: "../../etc/x", Role: eventlog.RoleClient}, "must be 1 to 64 characters"},
		{"no name", eventlog.BusClient{Role: eventlog.RoleClient}, "must be 1 to 64 characters"},
		{"an unknown role", eventlog.BusClient{Name: "x", Role: "admin"}, `role "admin" must be client, service or node`},
		{"a client serving", eventlog.BusClient{Name: "x", Role: eventlog.RoleClient, Serve: []string{"svc.x"}}, "only a service serves subjects"},
		{"a service serving nothing", eventlog.BusClient{Name: "x", Role: eventlog.RoleService}, "needs at least one subject"},
		{"capdir's log", eventlog.BusClient{Name: "x", Role: eventlog.RoleService, Serve: []string{"capdir.data.>"}}, "is reserved"},
		{"capdir in another case", eventlog.BusClient{Name: "x", Role: eventlog.RoleService, Serve: []string{"CapDir.x"}}, "is reserved"},
		{"JetStream's API", eventlog.BusClient{Name: "x", Role: eventlog.RoleService, Serve: []string{"$JS.API.>"}}, "is reserved"},
		{"others' replies", eventlog.BusClient{Name: "x", Role: eventlog.RoleService, Serve: []string{"_INBOX.>"}}, "is reserved"},
		{"everything", eventlog.BusClient{Name: "x", Role: eventlog.RoleService, Serve: []string{">"}}, "starts with a wildcard"},
		{"a leading *", eventlog.BusClient{Name: "x", Role: eventlog.RoleService, Serve: []string{"*.data.>"}}, "starts with a wildcard"},
		{"> inside", eventlog.BusClient{Name: "x", Role: eventlog.RoleService, Serve: []string{"svc.>.x"}}, "before the last token"},
		{"a partial wildcard", eventlog.BusClient{Name: "x", Role: eventlog.RoleService, Serve: []string{"svc.a*"}}, "stand alone"},
		{"an empty token", eventlog.BusClient{Name: "x", Role: eventlog.RoleService, Serve: []string{"svc..x"}}, "empty token"},
		{"whitespace", eventlog.BusClient{Name: "x", Role: eventlog.RoleService, Serve: []string{"svc x"}}, "without whitespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			_, _, err := eventlog.AddBusClient(dir, tt.c, now)
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("err = %v, want one saying %q", err, tt.says)
			}
			if entries, _ := os.ReadDir(eventlog.BusDir(dir)); len(entries) != 0 {
				t.Fatalf("a refused add left %d files", len(entries))
			}
		})
	}
}

// A record the server cannot read stops it from starting, naming the file and the
// fix, rather than leaving an identity out without a word.
func TestBadBusRecordStopsTheServer(t *testing.T) {
	for name, record := range map[string]string{
		"not json":         `{`,
		"a bad key":        `{"name":"c1","public_key":"UNOPE","role":"client"}`,
		"a seed as key":    `{"name":"c1","public_key":"SUAM5Q7FLMCCNZ3JYR7K6SQ2OFG63QGKCBLDWZUQMBPSJO6EHWYKAEMZSA","role":"client"}`,
		"another's record": `{"name":"c2","public_key":"` + pubKey(t) + `","role":"client"}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			os.MkdirAll(eventlog.BusDir(dir), 0o700)
			if err := os.WriteFile(filepath.Join(eventlog.BusDir(dir), "c1.json"), []byte(record), 0o600); err != nil {
				t.Fatal(err)
			}
			l, err := eventlog.Open(context.Background(), eventlog.Config{DataDir: dir, Listen: "127.0.0.1:0"})
			if err == nil {
				l.Close()
				t.Fatal("the server started with a record it cannot read")
			}
			if !errors.Is(err, eventlog.ErrBusClient) || !strings.Contains(err.Error(), "c1.json") || !strings.Contains(err.Error(), "capdir bus remove c1") {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func pubKey(t *testing.T) string {
	kp, _ := nkeys.CreateUser()
	pub, _ := kp.PublicKey()
	return pub
}

// Two names for one key would make the server's user list ambiguous.
func TestDuplicateBusKeyStopsTheServer(t *testing.T) {
	dir := t.TempDir()
	c, _, err := eventlog.AddBusClient(dir, eventlog.BusClient{Name: "a", Role: eventlog.RoleClient}, now)
	if err != nil {
		t.Fatal(err)
	}
	rec := `{"name":"b","public_key":"` + c.PublicKey + `","role":"node"}`
	if err := os.WriteFile(filepath.Join(eventlog.BusDir(dir), "b.json"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	if l, err := eventlog.Open(context.Background(), eventlog.Config{DataDir: dir, Listen: "127.0.0.1:0"}); err == nil || !strings.Contains(err.Error(), "the same public key") {
		if l != nil {
			l.Close()
		}
		t.Fatalf("err = %v", err)
	}
}

// An external cluster's credential file must be a credential and the owner's alone.
func TestCredsFile(t *testing.T) {
	dir := t.TempDir()
	_, seed, err := eventlog.AddBusClient(dir, eventlog.BusClient{Name: "n", Role: eventlog.RoleNode}, now)
	if err != nil {
		t.Fatal(err)
	}
	open := func(creds string) error {
		l, err := eventlog.Open(context.Background(), eventlog.Config{NATSURL: "nats://127.0.0.1:1", Creds: creds, StartTimeout: time.Second})
		if l != nil {
			l.Close()
		}
		return err
	}
	loose := filepath.Join(dir, "loose.nk")
	b, _ := os.ReadFile(seed)
	os.WriteFile(loose, b, 0o644)
	os.Chmod(loose, 0o644)
	notCreds := filepath.Join(dir, "notcreds")
	os.WriteFile(notCreds, []byte("hello"), 0o600)
	for _, tt := range []struct{ path, says string }{
		{loose, "chmod 600 " + loose},
		{notCreds, "neither a user JWT"},
		{filepath.Join(dir, "missing"), "no such file"},
		{dir, "not a regular file"},
	} {
		if err := open(tt.path); !errors.Is(err, eventlog.ErrCreds) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("creds %s: %v, want ErrCreds saying %q", tt.path, err, tt.says)
		}
	}
	// A good seed gets as far as connecting (nothing listens there).
	if err := open(seed); errors.Is(err, eventlog.ErrCreds) || err == nil {
		t.Errorf("good seed: %v", err)
	}
	for _, c := range []eventlog.Config{
		{DataDir: dir, Creds: seed},                            // creds without a cluster
		{NATSURL: "nats://127.0.0.1:1", Listen: "127.0.0.1:0"}, // a listener with a cluster
	} {
		if _, err := eventlog.Open(context.Background(), c); err == nil || !strings.Contains(err.Error(), "--nats-") {
			t.Errorf("config %+v: %v", c, err)
		}
	}
}

// Without a TCP listener nothing changes: in-process connections need no
// credential, and bus records in the data dir are not even read.
func TestInProcessOnlyNeedsNoCredential(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(eventlog.BusDir(dir), 0o700)
	os.WriteFile(filepath.Join(eventlog.BusDir(dir), "x.json"), []byte("{"), 0o600)
	l, err := eventlog.Open(context.Background(), eventlog.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.ClientURL() != "" {
		t.Fatalf("client URL %q without a listener", l.ClientURL())
	}
	nc, err := l.NewConn(nats.Name("test"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := nc.Request("$JS.API.INFO", nil, 5*time.Second); err != nil {
		t.Fatalf("in-process JetStream API: %v", err)
	}
}

// Another capdir process may append to the log only on an external cluster or
// through a node identity the embedded server admitted at its start: not through
// a bus client or a service, nor on a server that does not listen.
func TestOtherNodes(t *testing.T) {
	open := func(dir string, listen bool) *eventlog.Log {
		t.Helper()
		cfg := eventlog.Config{DataDir: dir}
		if listen {
			cfg.Listen = "127.0.0.1:0"
		}
		l, err := eventlog.Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	}
	dir := t.TempDir()
	now := time.Now()
	for _, c := range []eventlog.BusClient{{Name: "app", Role: eventlog.RoleClient}, {Name: "geo", Role: eventlog.RoleService, Serve: []string{"geo.>"}}} {
		if _, _, err := eventlog.AddBusClient(dir, c, now); err != nil {
			t.Fatal(err)
		}
	}
	if open(t.TempDir(), false).OtherNodes() {
		t.Error("a log that does not listen reports other nodes")
	}
	l := open(dir, true)
	if l.OtherNodes() {
		t.Error("a client and a service count as other nodes")
	}
	l.Close()
	if _, _, err := eventlog.AddBusClient(dir, eventlog.BusClient{Name: "n2", Role: eventlog.RoleNode}, now); err != nil {
		t.Fatal(err)
	}
	if !open(dir, true).OtherNodes() {
		t.Error("a node identity does not count as another node")
	}
}
