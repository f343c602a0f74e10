package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

const sampleCluster = "../../examples/cluster"

// sampleUser finds the nkey user of the sample configuration whose seed is
// keys/<name>.nk.
func sampleUser(t *testing.T, opts *server.Options, name string) *server.NkeyUser {
	t.Helper()
	seed, err := os.ReadFile(filepath.Join(sampleCluster, "keys", name+".nk"))
	if err != nil {
		t.Fatal(err)
	}
	kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(seed))))
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	for _, u := range opts.Nkeys {
		if u.Nkey == pub {
			return u
		}
	}
	t.Fatalf("keys/%s.nk is no user of the sample configuration", name)
	return nil
}

// sampleCreds copies the sample seed keys/<name>.nk to a file of mode 0600 (git
// checks the example seeds out readable by all; capdir wants them 0600) and
// returns its path.
func sampleCreds(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sampleCluster, "keys", name+".nk"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".nk")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The sample cluster configuration parses for each of its three servers, and
// grants what the embedded server grants: a node every permission in the log's
// account, a client exactly eventlog.ClientPermissions in an account of its own,
// a service its subjects and responses.
func TestSampleClusterConfig(t *testing.T) {
	var names, stores []string
	var ports, routePorts []int
	for _, file := range []string{"nats-server.conf", "n2.conf", "n3.conf"} {
		opts, err := server.ProcessConfigFile(filepath.Join(sampleCluster, file))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		names, stores = append(names, opts.ServerName), append(stores, opts.StoreDir)
		ports, routePorts = append(ports, opts.Port), append(routePorts, opts.Cluster.Port)
		if !opts.JetStream || opts.Cluster.Name != "capdir" || len(opts.Routes) != 3 || opts.Host != "127.0.0.1" || opts.Cluster.Host != "127.0.0.1" {
			t.Fatalf("%s: jetstream %v, cluster %q on %s, %d routes, host %s", file, opts.JetStream, opts.Cluster.Name, opts.Cluster.Host, len(opts.Routes), opts.Host)
		}
		if opts.Cluster.Username == "" || opts.Cluster.Password == "" {
			t.Fatalf("%s: routes without authorization", file)
		}
		node := sampleUser(t, opts, "node")
		if node.Account == nil || node.Account.Name != "CAPDIR" || node.Permissions != nil {
			t.Fatalf("%s: node user in %v with %+v; want every permission in CAPDIR", file, node.Account, node.Permissions)
		}
		demo := sampleUser(t, opts, "demo")
		want := eventlog.ClientPermissions("demo")
		if demo.Account == nil || demo.Account.Name != "BUS_DEMO" || demo.Permissions == nil ||
			!slices.Equal(demo.Permissions.Publish.Allow, want.Publish.Allow) || !slices.Equal(demo.Permissions.Subscribe.Allow, want.Subscribe.Allow) ||
			demo.Permissions.Publish.Deny != nil || demo.Permissions.Subscribe.Deny != nil || demo.Permissions.Response != nil {
			t.Fatalf("%s: demo client in %v with %+v %+v; want eventlog.ClientPermissions in its own account", file, demo.Account, demo.Permissions.Publish, demo.Permissions.Subscribe)
		}
		upper := sampleUser(t, opts, "upper")
		if p := upper.Permissions; upper.Account.Name != "CAPDIR" || p == nil || p.Publish == nil || p.Publish.Allow == nil || len(p.Publish.Allow) != 0 ||
			!slices.Equal(p.Subscribe.Allow, []string{"svc.upper"}) || p.Response == nil {
			t.Fatalf("%s: upper service with %+v", file, p)
		}
	}
	for _, got := range [][]string{names, stores} {
		if len(slices.Compact(slices.Sorted(slices.Values(got)))) != 3 {
			t.Fatalf("the three servers share a name or a store: %v", got)
		}
	}
	if !slices.Equal(ports, []int{4222, 4223, 4224}) || !slices.Equal(routePorts, []int{6222, 6223, 6224}) {
		t.Fatalf("client ports %v, route ports %v", ports, routePorts)
	}
}

// A capdir node runs on a server configured by the sample (one server of it, on
// free ports), with the node's credential: the permissions the sample grants are
// enough for capdir, for its client and for its service, and no more for the
// client.
func TestSampleClusterConfigServesCapdir(t *testing.T) {
	opts, err := server.ProcessConfigFile(filepath.Join(sampleCluster, "nats-server.conf"))
	if err != nil {
		t.Fatal(err)
	}
	opts.Port, opts.Cluster, opts.Routes = -1, server.ClusterOpts{}, nil
	opts.StoreDir, opts.NoSigs, opts.NoLog = t.TempDir(), true, true
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("the sample server did not start")
	}
	creds := func(name string) string { return sampleCreds(t, name) }
	n := nodetest.Start(t, func(c *capdir.Config) {
		c.Log.NATSURL, c.Log.Creds = srv.ClientURL(), creds("node")
	})
	row := `{"key":"GREET","type":"fn","target":"echo","content":"# WHAT: echo\n[\"Hello, $1!\"]"}`
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", row); code != 201 {
		t.Fatalf("POST row: %d %s", code, body)
	}
	connect := func(name string, opts ...nats.Option) (*nats.Conn, chan error) {
		seed, err := nats.NkeyOptionFromSeed(creds(name))
		if err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 8)
		all := append(opts, seed, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
		nc, err := nats.Connect(srv.ClientURL(), all...)
		if err != nil {
			t.Fatalf("connect as %s: %v", name, err)
		}
		t.Cleanup(nc.Close)
		return nc, errs
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	demo, demoErrs := connect("demo", wire.ClientOptions("demo")...)
	rc, err := wire.Invoke(ctx, demo, "demo", "GREET", "Ada", wire.WithToken(busToken(t, n, "demo", "GREET")))
	if err != nil {
		t.Fatal(err)
	}
	if rc.Actor != "token:demo" || rc.Result != "Hello, Ada!" {
		t.Fatalf("receipt = %+v", rc)
	}
	if rc, err = wire.Call(ctx, demo, "demo", "GREET", "Ada", wire.WithToken(busToken(t, n, "demo", "GREET"))); err != nil || rc.Result != "Hello, Ada!" {
		t.Fatalf("a call through the sample's imports: %+v, %v", rc, err)
	}
	demo.Publish("$JS.API.STREAM.LIST", nil)
	select {
	case err := <-demoErrs:
		if !strings.Contains(err.Error(), `Permissions Violation for Publish to "$JS.API.STREAM.LIST"`) {
			t.Fatalf("demo client: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the demo client reached the JetStream API")
	}

	upper, _ := connect("upper")
	if _, err := upper.Subscribe("svc.upper", func(m *nats.Msg) { m.Respond([]byte(strings.ToUpper(string(m.Data)))) }); err != nil {
		t.Fatal(err)
	}
	if err := upper.Flush(); err != nil {
		t.Fatal(err)
	}
	row = `{"key":"UPPER","type":"fn","runner":"nats","target":"svc.upper","content":"# WHAT: upper case, served over the bus"}`
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", row); code != 201 {
		t.Fatalf("POST row: %d %s", code, body)
	}
	if code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"UPPER","body":"ada"}`); code != 200 || !strings.Contains(body, `"result":"ADA"`) {
		t.Fatalf("dispatch to the service: %d %s", code, body)
	}
}
