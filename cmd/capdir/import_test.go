package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/api/answer"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/testdata"
	"github.com/spf13/cobra"
)

// runCLI runs the capdir command line in-process.
func runCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := rootCmd()
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetArgs(args)
	// A command that waits (--wait) ends with the test's failure, not CI's timeout.
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	err = cmd.ExecuteContext(ctx)
	if ctx.Err() != nil {
		err = fmt.Errorf("capdir %s did not end within %v: %w", strings.Join(args, " "), cliTimeout, err)
	}
	return out.String(), errb.String(), err
}

// cliTimeout bounds one command of runCLI.
const cliTimeout = 3 * time.Minute

// executeBounded executes cmd within cliTimeout.
func executeBounded(cmd *cobra.Command) error {
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	return cmd.ExecuteContext(ctx)
}

// testServer starts a node and returns it with the client flags that reach it.
func testServer(t *testing.T) (*capdir.Node, []string) {
	t.Helper()
	t.Setenv("CAPDIR_TERMINAL_KEY", "")
	n := nodetest.Start(t, nil)
	keyFile := filepath.Join(t.TempDir(), "terminal.key")
	if err := os.WriteFile(keyFile, []byte(nodetest.Key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return n, []string{"--server", n.URL(), "--key-file", keyFile}
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// listRows reads the whole directory (it is small in these tests).
func listRows(t *testing.T, n *capdir.Node) []contract.Row {
	t.Helper()
	status, body := nodetest.Do(t, n, "GET", "/api/directory?limit=1000", "")
	if status != http.StatusOK {
		t.Fatalf("list: HTTP %d %s", status, body)
	}
	var p struct {
		Rows []contract.Row `json:"rows"`
	}
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		t.Fatal(err)
	}
	return p.Rows
}

func TestImportCommandSampleFixture(t *testing.T) {
	n, flags := testServer(t)
	file := writeFile(t, "sample_rows.json", testdata.SampleRows())
	stdout, stderr, err := runCLI(t, "", append([]string{"import", file}, flags...)...)
	if err != nil || !strings.HasPrefix(stderr, "import: sent all 6 rows (") || withoutProgress(stderr) != "" {
		t.Fatalf("import: %v\n%s", err, stderr)
	}
	if want := "imported 6 of 6 rows from " + file + "; 0 failed\n"; stdout != want {
		t.Fatalf("stdout %q, want %q", stdout, want)
	}
	if rows := listRows(t, n); len(rows) != 6 {
		t.Fatalf("%d rows after import", len(rows))
	}

	// Again: every row exists, so every row fails and the command fails.
	stdout, stderr, err = runCLI(t, "", append([]string{"import", file}, flags...)...)
	if err == nil || err.Error() != "6 of 6 rows failed" {
		t.Fatalf("second import: err %v", err)
	}
	// One line sums them up, with the flag to use, however many they are.
	if want := "6 rows failed: their keys are already in the directory (NOW, GROK_MODELS, PROMPT_LAB_AGENT, BLOOIO_FINISH, DIR_PATCH, and 1 more); import with --upsert to replace them\n"; withoutProgress(stderr) != want ||
		stdout != "imported 0 of 6 rows from "+file+"; 6 failed\n" {
		t.Fatalf("second import printed\n%s\n%s", stdout, stderr)
	}
}

// A file with one bad row: the good rows are written, the bad one is reported with its
// index, key and what to fix, and the command exits non-zero.
func TestImportCommandReportsTheBadRow(t *testing.T) {
	n, flags := testServer(t)
	var rows []map[string]any
	if err := json.Unmarshal(testdata.SampleRows(), &rows); err != nil {
		t.Fatal(err)
	}
	rows = append(rows[:3], append([]map[string]any{{"key": "BAD_ROW", "type": "lambda"}}, rows[3:]...)...)
	data, _ := json.MarshalIndent(rows, "", "  ")
	file := writeFile(t, "with_bad_row.json", data)

	stdout, stderr, err := runCLI(t, "", append([]string{"import", file}, flags...)...)
	if err == nil || err.Error() != "1 of 7 rows failed" {
		t.Fatalf("err = %v", err)
	}
	if want := "row 3 BAD_ROW: type: must be one of fn, http, agent, flow; got \"lambda\"\n"; withoutProgress(stderr) != want {
		t.Fatalf("stderr %q, want %q", stderr, want)
	}
	if want := "imported 6 of 7 rows from " + file + "; 1 failed\n"; stdout != want {
		t.Fatalf("stdout %q, want %q", stdout, want)
	}
	if got := len(listRows(t, n)); got != 6 {
		t.Fatalf("%d rows, want the 6 good ones", got)
	}
}

// NDJSON from stdin, the key from $CAPDIR_TERMINAL_KEY, --upsert, and a hygiene
// refusal printed with its repair text.
func TestImportCommandNDJSONFromStdin(t *testing.T) {
	n, flags := testServer(t)
	t.Setenv("CAPDIR_TERMINAL_KEY", nodetest.Key)
	in := "\n\n" + `{"key":"A","type":"fn","target":"now"}` + "\n" +
		`{"key":"B","type":"fn","sensitive":1,"content":"# WHAT: risky"}` + "\n" +
		`{"key":"A","type":"fn","target":"now","content":"# WHAT: A, replaced"}` + "\n"
	stdout, stderr, err := runCLI(t, in, "import", "-", "--upsert", "--server", flags[1])
	if err == nil || err.Error() != "1 of 3 rows failed" {
		t.Fatalf("err = %v", err)
	}
	if !strings.HasPrefix(withoutProgress(stderr), "row 1 (line 4) B: registry_hygiene_refused: high_risk_missing_schema\n    how to fix: input_schema is required") {
		t.Fatalf("stderr %q", stderr)
	}
	if stdout != "imported 2 of 3 rows from stdin; 1 failed\n" {
		t.Fatalf("stdout %q", stdout)
	}
	rows := listRows(t, n)
	if len(rows) != 1 || rows[0].Content != "# WHAT: A, replaced" {
		t.Fatalf("rows %+v", rows)
	}
}

func TestImportCommandErrors(t *testing.T) {
	n, flags := testServer(t)
	empty := writeFile(t, "empty.json", []byte(" \n\t\n"))
	if _, _, err := runCLI(t, "", append([]string{"import", empty}, flags...)...); err == nil ||
		!strings.Contains(err.Error(), "no rows: the input is empty") {
		t.Errorf("empty file: %v", err)
	}
	file := writeFile(t, "rows.json", testdata.SampleRows())
	wrongKey := writeFile(t, "wrong.key", []byte("not-the-owner-key-at-all\n"))
	if _, _, err := runCLI(t, "", "import", file, "--server", n.URL(), "--key-file", wrongKey); err == nil ||
		!strings.Contains(err.Error(), "HTTP 401: unauthorized: "+n.URL()+" refused the owner key from --key-file "+wrongKey) {
		t.Errorf("wrong key: %v", err)
	}
	if _, _, err := runCLI(t, "", "import", file, "--server", n.URL(), "--data", t.TempDir()); err == nil ||
		!strings.Contains(err.Error(), "no owner key") {
		t.Errorf("no key: %v", err)
	}
	broken := writeFile(t, "broken.json", []byte(`[{"key":"A","type":"fn"},`))
	if _, _, err := runCLI(t, "", append([]string{"import", broken}, flags...)...); err == nil ||
		!strings.Contains(err.Error(), "HTTP 400: malformed JSON") {
		t.Errorf("broken array: %v", err)
	}
	if rows := listRows(t, n); len(rows) != 0 {
		t.Errorf("failed imports wrote %d rows", len(rows))
	}
}

// withoutProgress drops capdir import's progress lines from its stderr.
func withoutProgress(stderr string) string {
	var keep []string
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if !strings.HasPrefix(l, "import: ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

// A row written that cannot run as written is printed with the literal every
// call of it will fail with, and counted in the summary; the import succeeds.
func TestImportCommandPrintsWarnings(t *testing.T) {
	_, flags := testServer(t)
	in := `{"key":"OK","type":"fn","target":"echo"}` + "\n" + `{"key":"GONE","type":"fn","target":"nosuch"}` + "\n"
	stdout, stderr, err := runCLI(t, in, append([]string{"import", "-"}, flags...)...)
	if err != nil {
		t.Fatalf("import: %v %s", err, stderr)
	}
	if want := "row 1 (line 2) GONE: written, but every call of it will fail with ERR:fn:unknown_target:nosuch\n"; withoutProgress(stderr) != want {
		t.Fatalf("stderr %q, want %q", stderr, want)
	}
	if want := "imported 2 of 2 rows from stdin; 0 failed; 1 cannot run as written\n"; stdout != want {
		t.Fatalf("stdout %q, want %q", stdout, want)
	}
}

// Past the failures the server lists (answer.MaxListedFailures), capdir import
// counts the rest it was told of: the summary and the exit error count every
// failed row, and one line says how many are not listed.
func TestImportCommandCountsUnlistedFailures(t *testing.T) {
	_, flags := testServer(t)
	total := answer.MaxListedFailures + 3
	file := writeFile(t, "bad.ndjson", []byte(strings.Repeat("{}\n", total)))
	stdout, stderr, err := runCLI(t, "", append([]string{"import", file}, flags...)...)
	if want := fmt.Sprintf("%d of %d rows failed", total, total); err == nil || err.Error() != want {
		t.Fatalf("err %v, want %q", err, want)
	}
	if want := fmt.Sprintf("imported 0 of %d rows from %s; %d failed\n", total, file, total); stdout != want {
		t.Fatalf("stdout %q, want %q", stdout, want)
	}
	if want := fmt.Sprintf("\n3 more rows failed, not listed: the server lists the first %d\n", answer.MaxListedFailures); !strings.Contains(stderr, want) {
		t.Fatalf("stderr does not say %q: ...%s", want, stderr[max(0, len(stderr)-300):])
	}
}
