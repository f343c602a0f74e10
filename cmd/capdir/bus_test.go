package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBusCommands(t *testing.T) {
	dir := t.TempDir()
	cli := func(args ...string) (string, error) {
		t.Helper()
		out, stderr, err := runCLI(t, "", append(args, "--data", dir)...)
		return out + stderr, err
	}
	out, err := cli("bus", "list")
	if err != nil || !strings.Contains(out, "no bus identities") {
		t.Fatalf("list empty: %v %s", err, out)
	}
	out, err = cli("bus", "add-client", "billing")
	seed := filepath.Join(dir, "bus", "billing.nk")
	if err != nil || !strings.Contains(out, seed+" (mode 0600)") || !strings.Contains(out, "capdir.data.bus.billing.>") ||
		!strings.Contains(out, "_INBOX.billing") || !strings.Contains(out, "restart capdir serve") {
		t.Fatalf("add-client: %v\n%s", err, out)
	}
	if st, err := os.Stat(seed); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("seed: %v %v", st, err)
	}
	if out, err := cli("bus", "add-client", "geo", "--role", "service", "--serve", "geo.distance,geo.>"); err != nil || !strings.Contains(out, "geo.distance, geo.>") {
		t.Fatalf("add service: %v\n%s", err, out)
	}
	if out, err := cli("bus", "add-client", "node-b", "--role", "node"); err != nil || !strings.Contains(out, "--nats-creds") {
		t.Fatalf("add node: %v\n%s", err, out)
	}
	out, err = cli("bus", "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || len(lines) != 4 || strings.Join(strings.Fields(lines[0]), " ") != "NAME ROLE PUBLIC_KEY CREATED SEED_IN_DATA_DIR SERVES" {
		t.Fatalf("list: %v\n%s", err, out)
	}
	if f := strings.Fields(lines[2]); f[0] != "geo" || f[1] != "service" || f[4] != "yes" || f[5] != "geo.distance,geo.>" {
		t.Fatalf("list row: %q", lines[2])
	}
	for _, bad := range []struct {
		args []string
		says string
	}{
		{[]string{"bus", "add-client", "billing"}, "already exists"},
		{[]string{"bus", "add-client", "a.b"}, "e.g. capdir bus add-client billing-service"},
		{[]string{"bus", "add-client", "x", "--role", "admin"}, `role "admin"`},
		{[]string{"bus", "add-client", "x", "--serve", "svc.x"}, "only a service serves subjects"},
		{[]string{"bus", "add-client", "x", "--role", "service", "--serve", "capdir.>"}, "is reserved"},
		{[]string{"bus", "remove", "nobody"}, "capdir bus list shows the names"},
		{[]string{"bus", "add-client"}, "accepts 1 arg"},
	} {
		if out, err := cli(bad.args...); err == nil || !strings.Contains(err.Error()+out, bad.says) {
			t.Errorf("capdir %s: %v %s; want it refused saying %q", strings.Join(bad.args, " "), err, out, bad.says)
		}
	}
	if out, err := cli("bus", "remove", "billing"); err != nil || !strings.Contains(out, "removed billing") {
		t.Fatalf("remove: %v %s", err, out)
	}
	if _, err := os.Stat(seed); !os.IsNotExist(err) {
		t.Fatalf("the seed outlived remove: %v", err)
	}
	if out, _ := cli("bus", "list"); strings.Contains(out, "billing") {
		t.Fatalf("list after remove:\n%s", out)
	}
}
