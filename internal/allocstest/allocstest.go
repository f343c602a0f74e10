// Package allocstest measures how many times a function allocates, for the tests
// that hold a hot path to a count.
//
// testing.AllocsPerRun reads the process's allocation counter, so it also counts
// what another goroutine allocates meanwhile (a server a test before it left
// shutting down, a timer), and under the race detector sync.Pool drops a quarter
// of what is put back at random, so a pooled buffer is allocated again on some
// runs. PerRun measures three times and keeps the least, and does not measure
// under the race detector: the same tests run without it in `go test ./...`.
//
// MovedToHeap asks the compiler instead, for a test that holds a local of a hot
// path to the stack: which locals of each function it allocates on the heap.
package allocstest

import "testing"

// PerRun is testing.AllocsPerRun(runs, f) measured three times, the least of the
// three. Under the race detector it skips the test, saying so.
func PerRun(t testing.TB, runs int, f func()) float64 {
	t.Helper()
	if Race {
		t.Skip("allocation counts are not measured under the race detector (sync.Pool drops items at random there); `go test` without -race measures them")
	}
	least := testing.AllocsPerRun(runs, f)
	for i := 0; i < 2 && least > 0; i++ {
		least = min(least, testing.AllocsPerRun(runs, f))
	}
	return least
}
