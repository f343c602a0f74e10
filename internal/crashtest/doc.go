// Package crashtest crashes a real capdir server and checks what capdir promises
// survives it: an acknowledged directory write is never lost, an acknowledged
// invocation has exactly one receipt in the log, no receipt is without its request,
// and the projection equals a fresh replay of the log. It also damages the
// projection file of a stopped node and checks that capdir rebuilds it from the log
// or refuses it, and never serves a shorter history.
//
// The crash test builds cmd/capdir once, runs `capdir serve` as a child process on
// a temp data dir with HTTP on a loopback port, drives writes (POST and PUT of rows)
// and invocations (POST /api/dispatch of an echo row, a unique body per call) from
// concurrent clients, and kills the child with SIGKILL at random points, some
// during startup before /healthz answers, restarting it on the same data dir each
// time. The kill points come from a seeded generator; the seed is logged.
//
//	go test -v -run TestKill9 ./internal/crashtest                 # bounded: 3 kills
//	CAPDIR_CRASH_KILLS=25 go test -v -run TestKill9 -timeout 30m ./internal/crashtest
//	CAPDIR_CRASH_SEED=42 ...                                       # replay a schedule
//
// The figures (kills, writes and invocations acknowledged, receipts in the log,
// duration) are logged; RELIABILITY.md at the repository root records a run.
package crashtest
