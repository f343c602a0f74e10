package eventlog_test

import (
	"context"
	"testing"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// streamsCompression is the compression every stream of l is configured with,
// failing the test when they differ.
func streamsCompression(t *testing.T, l *eventlog.Log) jetstream.StoreCompression {
	t.Helper()
	var got []jetstream.StoreCompression
	for _, name := range wire.Streams {
		s, err := l.JetStream().Stream(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s.CachedInfo().Config.Compression)
	}
	for _, c := range got[1:] {
		if c != got[0] {
			t.Fatalf("the streams' compression differs: %v", got)
		}
	}
	return got[0]
}

// The streams are compressed with S2 unless the log is configured not to be, and
// a compression that is neither is refused before anything opens.
func TestStreamsCompressedWithS2ByDefault(t *testing.T) {
	ctx := context.Background()
	l, err := eventlog.Open(ctx, eventlog.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if c := streamsCompression(t, l); c != jetstream.S2Compression {
		t.Errorf("default compression %v, want s2", c)
	}
	none, err := eventlog.Open(ctx, eventlog.Config{DataDir: t.TempDir(), Compression: eventlog.CompressionNone})
	if err != nil {
		t.Fatal(err)
	}
	defer none.Close()
	if c := streamsCompression(t, none); c != jetstream.NoCompression {
		t.Errorf("compression %v with CompressionNone, want none", c)
	}
	if _, err := eventlog.Open(ctx, eventlog.Config{DataDir: t.TempDir(), Compression: "zstd"}); err == nil {
		t.Error("Open accepted compression zstd")
	}
}

// Changing the compression of a log that exists updates its streams' setting
// both ways, and every event written before stays readable.
func TestCompressionChangeKeepsTheLog(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var want []string
	for i, c := range []string{eventlog.CompressionNone, eventlog.CompressionS2, eventlog.CompressionNone} {
		l, err := eventlog.Open(ctx, eventlog.Config{DataDir: dir, Compression: c})
		if err != nil {
			t.Fatal(err)
		}
		wantC := jetstream.S2Compression
		if c == eventlog.CompressionNone {
			wantC = jetstream.NoCompression
		}
		if got := streamsCompression(t, l); got != wantC {
			t.Errorf("open %d with %s: the streams are %v", i, c, got)
		}
		for j := range 20 {
			ev := mustEvent(t, l, wire.TypeDirectoryMutate, map[string]any{"open": i, "n": j})
			if _, err := l.Append(ctx, wire.DirectorySubject("K"), ev); err != nil {
				t.Fatal(err)
			}
			want = append(want, ev.ID)
		}
		var got []string
		if err := l.Read(ctx, wire.ControlStream, 1, func(st eventlog.Stored) error {
			got = append(got, st.ID)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) || got[0] != want[0] || got[len(got)-1] != want[len(want)-1] {
			t.Fatalf("open %d with %s: read %d events, want %d", i, c, len(got), len(want))
		}
		l.Close()
	}
}
