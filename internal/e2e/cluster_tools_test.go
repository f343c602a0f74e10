//go:build unix

package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/crashtest"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/projector"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

// A node of the sample cluster (examples/cluster, three servers, R3 streams, the
// node's credential) keeps only its projection in its data dir: capdir digest
// reads it, and capdir replay rebuilds it from the cluster with the credential
// flags serve takes, to the same digest, leaving the streams as the node made
// them. Without a credential, with one the cluster does not admit, or with a file
// that holds none, replay is refused saying what to give. Both run as the
// installed binary does, in a process of their own.
func TestSampleClusterNodeTools(t *testing.T) {
	if testing.Short() {
		t.Skip("builds capdir and runs a three-server cluster; run without -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := crashtest.Build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := startSampleCluster(t)
	creds := sampleCreds(t, "node")
	n := nodetest.Start(t, func(cfg *capdir.Config) {
		cfg.Log.NATSURL, cfg.Log.Creds, cfg.Log.Replicas, cfg.Log.DataMaxAge = c.urls(0), creds, 3, 24*time.Hour
	})
	for _, row := range []string{
		`{"key":"GREET","type":"fn","target":"echo","content":"# WHAT: echo\n[\"Hello, $1!\"]"}`,
		`{"key":"NOW","type":"fn","target":"now","content":"# WHAT: the time"}`,
	} {
		if code, body := nodetest.Do(t, n, "POST", "/api/directory", row); code != 201 {
			t.Fatalf("POST: %d %s", code, body)
		}
	}
	if code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"GREET","body":"Ada"}`); code != 200 {
		t.Fatalf("dispatch: %d %s", code, body)
	}
	if err := nodetest.CatchUp(ctx, n); err != nil {
		t.Fatal(err)
	}
	dir := n.Config().Log.DataDir
	sctx, scancel := context.WithTimeout(ctx, 20*time.Second)
	err = n.Stop(sctx)
	scancel()
	if err != nil {
		t.Fatal(err)
	}
	want, err := projector.FileDigest(capdir.ProjectionPath(dir))
	if err != nil {
		t.Fatal(err)
	}

	digest := func() string {
		t.Helper()
		out, err := crashtest.Run(ctx, bin, "digest", "--data", dir)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out)
	}
	if got := digest(); got != want {
		t.Fatalf("capdir digest = %q, want %s", got, want)
	}
	if err := os.Remove(capdir.ProjectionPath(dir)); err != nil {
		t.Fatal(err)
	}
	urls := c.urls(1)
	refused := func(what, wantText string, args ...string) {
		t.Helper()
		_, err := crashtest.Run(ctx, bin, append([]string{"replay", "--data", dir, "--nats-url", urls}, args...)...)
		if err == nil || !strings.Contains(err.Error(), wantText) {
			t.Fatalf("replay %s: %v; want an error saying %q", what, err, wantText)
		}
	}
	refused("without a credential", "--nats-creds")
	kp, _ := nkeys.CreateUser()
	seed, _ := kp.Seed()
	stranger := filepath.Join(t.TempDir(), "stranger.nk")
	if err := os.WriteFile(stranger, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	refused("with a key the cluster does not admit", "refused capdir's connection", "--nats-creds", stranger)
	junk := filepath.Join(t.TempDir(), "junk.nk")
	if err := os.WriteFile(junk, []byte(strings.Repeat("not a seed ", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	refused("with a file holding no credential", "bad NATS credential file", "--nats-creds", junk)

	out, err := crashtest.Run(ctx, bin, "replay", "--data", dir, "--nats-url", urls, "--nats-creds", creds)
	if err != nil || !strings.Contains(out, "replayed ") {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	if got := digest(); got != want {
		t.Fatalf("capdir digest after replay = %q, want %s", got, want)
	}
	// The tools left the streams as the node made them: three replicas each, and
	// the data stream's retention.
	seedOpt, err := nats.NkeyOptionFromSeed(creds)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(urls, seedOpt)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range wire.Streams {
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		cfg := s.CachedInfo().Config
		if cfg.Replicas != 3 || (name == wire.DataStream && cfg.MaxAge != 24*time.Hour) {
			t.Fatalf("stream %s after the tools: %d replicas, max age %s; want 3 and the node's retention (24h)", name, cfg.Replicas, cfg.MaxAge)
		}
	}
}
