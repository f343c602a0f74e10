package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/capdir/capdir/internal/nodetest"
)

// compliantRow is a POST body that passes every hygiene gate.
const compliantRow = `{"key":"%s","type":"fn","target":"now","category":"time",
"content":"# WHAT: Return the current time.\n# ARGS: none\n# EX: [NOW][/NOW]"}`

// controlSeq is the control stream's last sequence.
func controlSeq(t testing.TB, n *capdir.Node) uint64 {
	t.Helper()
	seq, err := n.Log().LastSeq(context.Background(), wire.ControlStream)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// mutations reads every DIRECTORY_MUTATE of key from the log, in order.
func mutations(t testing.TB, n *capdir.Node, key string) []mutation {
	t.Helper()
	var out []mutation
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := n.Log().Read(ctx, wire.ControlStream, 1, func(s eventlog.Stored) error {
		if s.Subject != wire.DirectorySubject(key) || s.Type != wire.TypeDirectoryMutate {
			return nil
		}
		var m contract.DirectoryMutation
		if err := s.DataAs(&m); err != nil {
			return err
		}
		out = append(out, mutation{DirectoryMutation: m, Seq: s.Seq, Actor: s.Actor})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type mutation struct {
	contract.DirectoryMutation
	Seq   uint64
	Actor string
}

// send is nodetest.Do with an explicit content type.
func send(t testing.TB, n *capdir.Node, method, path, contentType, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, n.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-terminal-key", nodetest.Key)
	if contentType != "" {
		req.Header.Set("content-type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// decode parses a JSON response body into v.
func decode(t testing.TB, body string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("response %q: %v", body, err)
	}
}

// mustDo sends a request and fails unless the status is want.
func mustDo(t testing.TB, n *capdir.Node, want int, method, path, body string) string {
	t.Helper()
	status, got := nodetest.Do(t, n, method, path, body)
	if status != want {
		t.Fatalf("%s %s: HTTP %d %s, want %d", method, path, status, got, want)
	}
	return got
}
