package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/testdata"
)

// export --at writes the directory as it stood then, whatever changed since;
// history prints each change of a row, a deleted one's too.
func TestExportAtAndHistory(t *testing.T) {
	n, flags := testServer(t)
	if _, stderr, err := runCLI(t, "", append([]string{"import", writeFile(t, "rows.json", testdata.SampleRows())}, flags...)...); err != nil {
		t.Fatalf("import: %v %s", err, stderr)
	}
	before, _, err := runCLI(t, "", append([]string{"export"}, flags...)...)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := n.Log().LastSeq(context.Background(), wire.ControlStream)
	if err != nil {
		t.Fatal(err)
	}
	page := listRows(t, n)
	first, second := page[0].Key, page[1].Key
	if _, _, err := runCLI(t, "", append([]string{"import", writeFile(t, "more.json", []byte(fmt.Sprintf(`[{"key":"%s","type":"fn","target":"now","category":"moved","content":"# WHAT: moved"}]`, first))), "--upsert"}, flags...)...); err != nil {
		t.Fatal(err)
	}
	if code, body := nodetest.Do(t, n, "DELETE", "/api/directory/"+second, ""); code != 200 {
		t.Fatalf("delete %s: %d %s", second, code, body)
	}
	got, stderr, err := runCLI(t, "", append([]string{"export", "--at", fmt.Sprint(seq)}, flags...)...)
	if err != nil || got != before {
		t.Fatalf("export --at %d: %v %s\n got %.300s\nwant %.300s", seq, err, stderr, got, before)
	}
	now, _, _ := runCLI(t, "", append([]string{"export"}, flags...)...)
	if now == before {
		t.Fatal("the directory did not change")
	}
	out, _, err := runCLI(t, "", append([]string{"history", second}, flags...)...)
	if err != nil || !strings.Contains(out, " delete  (contract changed)") || !strings.HasPrefix(out, "seq ") {
		t.Fatalf("history %s: %v\n%s", second, err, out)
	}
	out, _, err = runCLI(t, "", append([]string{"history", first}, flags...)...)
	if err != nil || !strings.Contains(out, `category: `) || !strings.Contains(out, ` -> "moved"`) {
		t.Fatalf("history %s: %v\n%s", first, err, out)
	}
	if _, _, err := runCLI(t, "", append([]string{"export", "--at", "yesterday"}, flags...)...); err == nil || !strings.Contains(err.Error(), "at must be a control-stream sequence") {
		t.Fatalf("export --at yesterday: %v", err)
	}
	if _, _, err := runCLI(t, "", append([]string{"history", "NEVER"}, flags...)...); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("history of a key never written: %v", err)
	}
	wrong := writeFile(t, "wrong.key", []byte("not-the-owner-key-0123456789\n"))
	if _, _, err := runCLI(t, "", "history", first, "--server", n.URL(), "--key-file", wrong); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("history with a wrong key: %v", err)
	}
}
