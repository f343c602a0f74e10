package eventlog_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/logtest"
	"github.com/capdir/capdir/eventlog/wire"
)

func mustEvent(t *testing.T, l *eventlog.Log, typ string, data any) wire.Event {
	t.Helper()
	ev, err := l.NewEvent(typ, "test", data)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestAppendReadInOrder(t *testing.T) {
	l := logtest.Open(t, "")
	ctx := context.Background()
	var want []string
	for i := 0; i < 50; i++ {
		ev := mustEvent(t, l, wire.TypeDirectoryMutate, map[string]int{"i": i})
		seq, err := l.Append(ctx, wire.DirectorySubject("K"), ev)
		if err != nil {
			t.Fatal(err)
		}
		if seq != uint64(i+1) {
			t.Fatalf("seq = %d, want %d", seq, i+1)
		}
		want = append(want, ev.ID)
	}
	var got []string
	err := l.Read(ctx, wire.ControlStream, 1, func(s eventlog.Stored) error {
		if s.Seq != uint64(len(got)+1) {
			t.Fatalf("out of order: seq %d at position %d", s.Seq, len(got))
		}
		got = append(got, s.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d events, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d = %s, want %s", i, got[i], want[i])
		}
	}
	// Reading from the middle starts there.
	var n int
	if err := l.Read(ctx, wire.ControlStream, 41, func(s eventlog.Stored) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 10 {
		t.Fatalf("read from 41 gave %d events, want 10", n)
	}
}

func TestAppendConflict(t *testing.T) {
	l := logtest.Open(t, "")
	ctx := context.Background()
	subj := wire.DirectorySubject("ROW")
	seq1, err := l.Append(ctx, subj, mustEvent(t, l, wire.TypeDirectoryMutate, 1), eventlog.ExpectLastSubjectSeq(0))
	if err != nil {
		t.Fatal(err)
	}
	// A second create (expecting an empty subject) loses.
	_, err = l.Append(ctx, subj, mustEvent(t, l, wire.TypeDirectoryMutate, 2), eventlog.ExpectLastSubjectSeq(0))
	if !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("second create: err = %v, want ErrConflict", err)
	}
	// Another key's writes do not move this key's sequence.
	if _, err := l.Append(ctx, wire.DirectorySubject("OTHER"), mustEvent(t, l, wire.TypeDirectoryMutate, 3)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, subj, mustEvent(t, l, wire.TypeDirectoryMutate, 4), eventlog.ExpectLastSubjectSeq(seq1)); err != nil {
		t.Fatalf("write at the right sequence: %v", err)
	}
	_, err = l.Append(ctx, subj, mustEvent(t, l, wire.TypeDirectoryMutate, 5), eventlog.ExpectLastSubjectSeq(seq1))
	if !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("stale write: err = %v, want ErrConflict", err)
	}
}

func TestAppendDedupe(t *testing.T) {
	l := logtest.Open(t, "")
	ctx := context.Background()
	ev := mustEvent(t, l, wire.TypeReceipt, "x")
	s1, err := l.Append(ctx, wire.ReceiptSubject("K"), ev)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := l.Append(ctx, wire.ReceiptSubject("K"), ev)
	if err != nil {
		t.Fatal(err)
	}
	if s1 != s2 {
		t.Fatalf("retried append stored twice: %d then %d", s1, s2)
	}
	last, err := l.LastSeq(ctx, wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	if last != 1 {
		t.Fatalf("data stream holds %d messages, want 1", last)
	}
}

// WithoutDedupe leaves the event id out of the log's duplicate detection: the
// message carries no Nats-Msg-Id, and the same event appended twice is stored twice.
func TestAppendWithoutDedupe(t *testing.T) {
	l := logtest.Open(t, "")
	ctx := context.Background()
	ev := mustEvent(t, l, wire.TypeInvocationRequested, map[string]string{"key": "K"})
	s1, err := l.Append(ctx, wire.RequestSubject("K"), ev, eventlog.WithoutDedupe())
	if err != nil {
		t.Fatal(err)
	}
	f, err := l.AppendAsync(wire.RequestSubject("K"), ev, eventlog.WithoutDedupe())
	if err != nil {
		t.Fatal(err)
	}
	s2, err := eventlog.AwaitAck(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if s1 == s2 {
		t.Fatalf("both appends answered sequence %d: deduplicated", s1)
	}
	s, err := l.JetStream().Stream(ctx, wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetMsg(ctx, s1)
	if err != nil {
		t.Fatal(err)
	}
	if id := m.Header.Get("Nats-Msg-Id"); id != "" {
		t.Fatalf("Nats-Msg-Id %q on an append without dedupe", id)
	}
	var got []string
	err = l.Read(ctx, wire.DataStream, 1, func(st eventlog.Stored) error {
		got = append(got, st.ID)
		return nil
	})
	if err != nil || len(got) != 2 || got[0] != ev.ID || got[1] != ev.ID {
		t.Fatalf("read back %v (%v), want the event twice", got, err)
	}
}

func TestReopenKeepsLog(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	l, err := eventlog.Open(ctx, eventlog.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := l.Append(ctx, wire.DirectorySubject("K"), mustEvent(t, l, wire.TypeDirectoryMutate, i)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	l.Close() // idempotent
	l2 := logtest.Open(t, dir)
	last, err := l2.LastSeq(ctx, wire.ControlStream)
	if err != nil {
		t.Fatal(err)
	}
	if last != 3 {
		t.Fatalf("after reopen last seq = %d, want 3", last)
	}
}

func TestInvalidMessageIsSkippedNotFatal(t *testing.T) {
	l := logtest.Open(t, "")
	ctx := context.Background()
	if _, err := l.JetStream().Publish(ctx, wire.RequestSubject("K"), []byte("not json")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, wire.RequestSubject("K"), mustEvent(t, l, wire.TypeInvocationRequested, 1)); err != nil {
		t.Fatal(err)
	}
	var invalid, valid int
	err := l.Read(ctx, wire.DataStream, 1, func(s eventlog.Stored) error {
		if s.Invalid != "" {
			invalid++
		} else {
			valid++
		}
		return nil
	})
	if err != nil || invalid != 1 || valid != 1 {
		t.Fatalf("invalid=%d valid=%d err=%v", invalid, valid, err)
	}
}

func TestConfigValidate(t *testing.T) {
	cases := []eventlog.Config{
		{},                                // no data dir
		{DataDir: "x", Sync: "sometimes"}, // bad sync
		{DataDir: "x", Replicas: 3},       // replicas on embedded
		{DataDir: "x", DataMaxAge: -time.Second},
		{DataDir: "x", ElectionWait: -time.Second},
	}
	for i, c := range cases {
		if _, err := eventlog.Open(context.Background(), c); err == nil {
			t.Errorf("case %d: Open accepted a bad config", i)
		}
	}
}

func TestListenOnAnyFreePort(t *testing.T) {
	l, err := eventlog.Open(context.Background(), eventlog.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	url := l.ClientURL()
	if url == "" || strings.HasSuffix(url, ":4222") || strings.HasSuffix(url, ":0") {
		t.Fatalf("client URL = %q, want a free port", url)
	}
	// A second log on the same machine gets another port.
	l2, err := eventlog.Open(context.Background(), eventlog.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if l2.ClientURL() == url {
		t.Fatalf("two logs share %s", url)
	}
}

// Event data is decoded as encoding/json would: the same values, the same
// refusals.
func TestDataAsMatchesEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{"invocation_id":"inv_1","trace":"t_1","key":"K","body":"a|b \"q\" é \u2028","credential":"owner:terminal-key","dir_seq":7}`,
		`{"INVOCATION_ID":"inv_2","Key":"K2"}`,
		`{"key":"K","extra":{"nested":[1,2,{"x":null}]},"body":""}`,
		`{"key":"K","args":{"latitude":37.77,"tags":["a|b",{"x":null}]}}`,
		`{"key":"K","args":null}`,
		`{"key":"K","args":"37.77|1"}`,
		`{"key":"K","dir_seq":-1}`,
		`{"key":"K","dir_seq":"7"}`,
		`{"key":"K",}`,
		`{"key":"K"} trailing`,
		`not json`,
		`null`,
		`{"key":"\ud800"}`,
	} {
		var want, got wire.InvocationRequest
		werr := json.Unmarshal([]byte(in), &want)
		ev := wire.Event{Type: wire.TypeInvocationRequested, Data: json.RawMessage(in)}
		gerr := ev.DataAs(&got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%s: encoding/json err %v, DataAs err %v", in, werr, gerr)
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %+v\nwant %+v", in, got, want)
		}
		if gerr != nil && !errors.Is(gerr, wire.ErrBadEvent) {
			t.Fatalf("%s: err %v is not ErrBadEvent", in, gerr)
		}
	}
}

// Existing opens the streams as a node left them: their retention is not reset
// to the opener's, and a log without them is refused, naming the stream.
func TestOpenExistingLeavesTheStreamsAsTheyAre(t *testing.T) {
	ctx := context.Background()
	empty := t.TempDir()
	if _, err := eventlog.Open(ctx, eventlog.Config{DataDir: empty, Existing: true}); !errors.Is(err, eventlog.ErrStreamNotFound) || !strings.Contains(err.Error(), wire.ControlStream) {
		t.Fatalf("open an empty store with Existing: %v; want ErrStreamNotFound naming %s", err, wire.ControlStream)
	}
	dir := t.TempDir()
	l, err := eventlog.Open(ctx, eventlog.Config{DataDir: dir, DataMaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	l, err = eventlog.Open(ctx, eventlog.Config{DataDir: dir, Existing: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s, err := l.JetStream().Stream(ctx, wire.DataStream)
	if err != nil {
		t.Fatal(err)
	}
	if age := s.CachedInfo().Config.MaxAge; age != time.Hour {
		t.Fatalf("data stream retention %s after an Existing open; want the node's 1h", age)
	}
}
