package bench_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/capdir/capdir/internal/bench"
)

// startReference starts the reference pipeline on a fresh node's server.
func startReference(tb testing.TB) (*bench.Env, *bench.Reference) {
	tb.Helper()
	e, err := bench.StartEnv(context.Background(), bench.EnvConfig{Dir: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	nc, err := e.Node.Log().NewConn()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	ref, err := bench.StartReference(context.Background(), nc, tb.TempDir(), 8)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ref.Close() })
	return e, ref
}

// TestReferenceFoldsOneReceiptPerCall: every call of the reference pipeline, direct
// or over HTTP, stores one request and one receipt and folds one receipt into bbolt
// before its caller is answered.
func TestReferenceFoldsOneReceiptPerCall(t *testing.T) {
	_, ref := startReference(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const n = 300
	if _, _, err := bench.Drive(ctx, n, 16, 0, ref.Invoke()); err != nil {
		t.Fatal(err)
	}
	if got := ref.Folded(); got != n {
		t.Fatalf("folded %d receipts after %d calls answered, want %d", got, n, n)
	}
	op, closeHTTP, err := ref.RawHTTPInvoke()
	if err != nil {
		t.Fatal(err)
	}
	defer closeHTTP()
	if _, _, err := bench.Drive(ctx, n, 16, 0, op); err != nil {
		t.Fatal(err)
	}
	stored, err := ref.Stored()
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := ref.StreamMsgs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stored != 2*n || msgs != 4*n {
		t.Fatalf("after %d calls: %d receipts in bbolt, %d messages in the stream; want %d and %d", 2*n, stored, msgs, 2*n, 4*n)
	}
}

// TestReferenceRefusesAMalformedBody: the reference's handler answers 400 naming
// the body, and nothing is appended.
func TestReferenceRefusesAMalformedBody(t *testing.T) {
	_, ref := startReference(t)
	resp, err := http.Post(ref.URL()+"/api/dispatch", "application/json", strings.NewReader(`{"key":`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", resp.StatusCode)
	}
	msgs, err := ref.StreamMsgs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if msgs != 0 {
		t.Fatalf("%d messages appended for a malformed body, want 0", msgs)
	}
}

// TestRunReferenceScenario: `capdir bench --only reference` measures the floor,
// both of capdir's rows and both of the reference's, each with its floor ratio,
// and notes capdir ÷ the reference on capdir's rows; then the packed reference
// beside the reference, noting its ratio and its stored messages per invocation.
func TestRunReferenceScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a node and drives thousands of calls")
	}
	res, err := bench.Run(context.Background(), bench.Config{Quick: true, Only: []string{bench.ScenarioReference}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var refs, capdirs, packed int
	for _, r := range res {
		if r.Scenario != bench.ScenarioReference {
			continue
		}
		if r.Floor <= 0 {
			t.Errorf("%s: no floor ratio", r.Name)
		}
		switch {
		case strings.HasPrefix(r.Name, "packed reference pipeline"):
			if r.Values["packed_ratio"] <= 0 || r.Values["stored_per_invocation"] <= 0 {
				t.Errorf("%s: no ratio to the reference or no stored messages per invocation: %v", r.Name, r.Values)
			}
			packed++
		case strings.HasPrefix(r.Name, "reference pipeline"):
			refs++
		case r.Values["reference_ratio"] > 0:
			capdirs++
		default:
			t.Errorf("%s: no ratio to the reference", r.Name)
		}
	}
	if refs != 3 || capdirs != 2 || packed != 1 {
		t.Fatalf("%d reference rows, %d capdir rows and %d packed, want 3, 2 and 1: %+v", refs, capdirs, packed, res)
	}
}

// BenchmarkReference is the reference pipeline of the same shape as capdir's
// invocation path (see bench.Reference), 64 in flight: called directly, and
// through its HTTP handler with the lean client. Compare with BenchmarkFnNATS and
// BenchmarkFnHTTP/par64-lean in the same session.
func BenchmarkReference(b *testing.B) {
	e, ref := startReference(b)
	b.Run("par64", func(b *testing.B) { driveOp(b, e, bench.Parallel, ref.Invoke()) })
	op, closeHTTP, err := ref.RawHTTPInvoke()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(closeHTTP)
	b.Run("par64-lean", func(b *testing.B) { driveOp(b, e, bench.Parallel, op) })
}
