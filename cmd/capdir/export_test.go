package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capdir/capdir/api/client"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/testdata"
)

// withoutTimes drops the server-set timestamps, which an import sets anew.
func withoutTimes(t *testing.T, rows []contract.Row) string {
	t.Helper()
	rows = append([]contract.Row(nil), rows...)
	for i := range rows {
		rows[i].UpdatedAt, rows[i].CreatedAt, rows[i].RowNum = "", "", 0
	}
	b, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Export writes what import reads: the reference fixture, exported from one server as a
// JSON array and as NDJSON, imports into fresh servers and exports again unchanged.
func TestExportRoundTrip(t *testing.T) {
	a, aflags := testServer(t)
	if _, stderr, err := runCLI(t, "", append([]string{"import", writeFile(t, "rows.json", testdata.SampleRows())}, aflags...)...); err != nil {
		t.Fatalf("import: %v %s", err, stderr)
	}
	out := filepath.Join(t.TempDir(), "export.json")
	_, stderr, err := runCLI(t, "", append([]string{"export", "-o", out}, aflags...)...)
	if err != nil || stderr != "exported 6 rows to "+out+"\n" {
		t.Fatalf("export: %v %q", err, stderr)
	}
	exported, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rows []contract.Row
	if err := json.Unmarshal(exported, &rows); err != nil {
		t.Fatalf("export is not a JSON array: %v\n%s", err, exported)
	}
	if strings.Contains(string(exported), "row_num") || !strings.HasPrefix(string(exported), "[\n{\"key\":\"BLOOIO_FINISH\"") {
		t.Errorf("export starts %.60q", exported)
	}
	var fixture []contract.Row
	json.Unmarshal(testdata.SampleRows(), &fixture)
	contract.Number(fixture)
	if got, want := withoutTimes(t, rows), withoutTimes(t, fixture); got != want {
		t.Fatalf("export differs from the fixture:\n got %s\nwant %s", got, want)
	}
	live := listRows(t, a)
	for i := range live {
		if live[i].UpdatedAt != rows[i].UpdatedAt || live[i].CreatedAt != rows[i].CreatedAt {
			t.Errorf("%s: exported timestamps %s %s, stored %s %s", rows[i].Key, rows[i].UpdatedAt, rows[i].CreatedAt, live[i].UpdatedAt, live[i].CreatedAt)
		}
	}

	// NDJSON to stdout, one row per line, same rows.
	ndjson, _, err := runCLI(t, "", append([]string{"export", "--ndjson"}, aflags...)...)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(ndjson, "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d NDJSON lines", len(lines))
	}

	for name, data := range map[string]string{"array": string(exported), "ndjson": ndjson} {
		t.Run(name, func(t *testing.T) {
			b, bflags := testServer(t)
			if _, stderr, err := runCLI(t, data, append([]string{"import", "-"}, bflags...)...); err != nil {
				t.Fatalf("import into a fresh server: %v %s", err, stderr)
			}
			again, _, err := runCLI(t, "", append([]string{"export"}, bflags...)...)
			if err != nil {
				t.Fatal(err)
			}
			var back []contract.Row
			if err := json.Unmarshal([]byte(again), &back); err != nil {
				t.Fatal(err)
			}
			if got, want := withoutTimes(t, back), withoutTimes(t, rows); got != want {
				t.Fatalf("round trip changed the rows:\n got %s\nwant %s", got, want)
			}
			if len(listRows(t, b)) != 6 {
				t.Fatal("fresh server does not hold 6 rows")
			}
		})
	}
}

// Export pages through more rows than one page holds, filters, and writes "[]" for
// an empty result. The owner key comes from <--data>/terminal.key.
func TestExportPagesAndFilters(t *testing.T) {
	n, _ := testServer(t)
	dataDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dataDir, "terminal.key"), []byte(nodetest.Key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--server", n.URL(), "--data", dataDir}
	var b strings.Builder
	const count = 2345
	for i := range count {
		fmt.Fprintf(&b, `{"key":"K%05d","type":"fn","target":"echo","category":"c%d","enabled":%d}`+"\n", i, i%3, i%2)
	}
	if status, body := send(t, n.URL(), "/api/directory/import", b.String()); status != http.StatusOK ||
		strings.TrimSpace(body) != fmt.Sprintf(`{"ok":%d,"failed":[]}`, count) {
		t.Fatalf("import: HTTP %d %.200s", status, body)
	}
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, count},
		{[]string{"--category", "c1"}, (count + 1) / 3},
		{[]string{"--enabled", "0", "--category", "c1"}, 391},
		{[]string{"--type", "agent"}, 0},
	} {
		out, _, err := runCLI(t, "", append(append([]string{"export"}, tc.args...), flags...)...)
		if err != nil {
			t.Fatalf("export %v: %v", tc.args, err)
		}
		var rows []contract.Row
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatalf("export %v: %v", tc.args, err)
		}
		if len(rows) != tc.want {
			t.Errorf("export %v: %d rows, want %d", tc.args, len(rows), tc.want)
		}
		for i := 1; i < len(rows); i++ {
			if rows[i-1].Key >= rows[i].Key {
				t.Fatalf("export %v: not in canonical order at %d", tc.args, i)
			}
		}
		if tc.want == 0 && out != "[]\n" {
			t.Errorf("empty export %q", out)
		}
	}
	if _, _, err := runCLI(t, "", append([]string{"export", "--enabled", "maybe"}, flags...)...); err == nil ||
		!strings.Contains(err.Error(), "HTTP 400: bad query parameter: enabled must be 0 or 1") {
		t.Errorf("bad filter: %v", err)
	}
}

// send posts NDJSON with the owner key.
func send(t *testing.T, base, path, body string) (int, string) {
	t.Helper()
	if path != "/api/directory/import" {
		t.Fatalf("send: only the import is used here, not %s", path)
	}
	c, err := client.New(base, nodetest.Key)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Import(t.Context(), strings.NewReader(body), client.ImportOptions{ContentType: "application/x-ndjson"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return http.StatusOK, string(out)
}
