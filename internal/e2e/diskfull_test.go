package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/internal/nodetest"
	"github.com/capdir/capdir/internal/upstreamtest"
)

// A node whose log is on a small tmpfs that fills up: writes and dispatches are
// answered 507 with the log's literal (not a 503 after a wait), and once the disk
// has room the node takes writes and runs calls again without a restart: its
// projector and its workers resume on the restarted JetStream. A call running
// when the disk filled keeps its receipt until there is room, and runs once.
func TestFullDiskAnswers507AndTheNodeRecovers(t *testing.T) {
	dir := t.TempDir()
	store := eventlog.StoreDir(dir)
	logtest.SmallDisk(t, store, 64<<20)
	n := nodetest.Start(t, func(c *capdir.Config) { c.Log.DataDir = dir })
	row := func(key string) string {
		return fmt.Sprintf(`{"key":%q,"type":"fn","target":"echo","content":"# WHAT: echo\n[\"Hello, $1!\"]"}`, key)
	}
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", row("GREET")); code != 201 {
		t.Fatalf("POST: %d %s", code, body)
	}
	// A call running when the disk fills: its upstream answers only then.
	up := upstreamtest.StartGated(t, upstreamtest.Reply(http.StatusOK, "done"))
	held := `{"key":"HELD","type":"http","target":"GET ` + up.URL + `/","content":"# WHAT: answers when told"}`
	if code, body := nodetest.Do(t, n, "POST", "/api/directory", held); code != 201 {
		t.Fatalf("POST: %d %s", code, body)
	}
	idem := map[string]string{"Idempotency-Key": "held-1"}
	inFlight := make(chan string, 1)
	go func() {
		code, body := nodetest.DoHeaders(t, n, "POST", "/api/dispatch", `{"key":"HELD","body":""}`, idem)
		inFlight <- fmt.Sprint(code, " ", body)
	}()
	<-up.Arrived()
	free := logtest.FillDisk(t, store)

	full := func(what string, code int, body string) {
		t.Helper()
		var ans struct{ Error string }
		json.Unmarshal([]byte(body), &ans)
		if code != 507 || !strings.Contains(ans.Error, "the log's disk is full") {
			t.Fatalf("%s on a full disk: %d %s; want 507 saying the log's disk is full", what, code, body)
		}
	}
	code, body := 201, ""
	for i := 0; i < 200 && code == 201; i++ {
		code, body = nodetest.Do(t, n, "POST", "/api/directory", fmt.Sprintf(`{"key":"R%d","type":"fn","target":"echo","content":"# WHAT: %s"}`, i, strings.Repeat("x", 16<<10)))
	}
	full("POST", code, body)
	code, body = nodetest.Do(t, n, "PUT", "/api/directory/GREET", row("GREET"))
	full("PUT", code, body)
	code, body = nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"GREET","body":"Ada"}`)
	full("dispatch", code, body)
	up.Release() // the call ends while the disk is full: its receipt waits for room

	free()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body = nodetest.Do(t, n, "POST", "/api/directory", row("AFTER"))
		if code == 201 {
			break
		}
		if code != 507 || time.Now().After(deadline) {
			t.Fatalf("POST once the disk has room: %d %s", code, body)
		}
		time.Sleep(50 * time.Millisecond) // polling the log's recovery
	}
	if code, body := nodetest.Do(t, n, "GET", "/api/directory/AFTER", ""); code != 200 {
		t.Fatalf("GET the row written after: %d %s", code, body)
	}
	if code, body := nodetest.Do(t, n, "POST", "/api/dispatch", `{"key":"AFTER","body":"Ada"}`); code != 200 || !strings.Contains(body, `"result":"Hello, Ada!"`) {
		t.Fatalf("dispatch once the disk has room: %d %s", code, body)
	}
	// The call that was running: answered with its receipt (or pending, never
	// refused: its request was stored), and run once.
	if got := <-inFlight; !strings.HasPrefix(got, "200 ") && !strings.HasPrefix(got, "202 ") {
		t.Fatalf("the call running when the disk filled was answered %s", got)
	}
	if code, body := nodetest.DoHeaders(t, n, "POST", "/api/dispatch", `{"key":"HELD","body":""}`, idem); code != 200 || !strings.Contains(body, "done") {
		t.Fatalf("the call running when the disk filled, asked again: %d %s", code, body)
	}
	if c := up.Hits(); c != 1 {
		t.Fatalf("the upstream of the call running when the disk filled got %d calls; want 1", c)
	}
}
