package breaker_test

import (
	"fmt"
	"time"

	"github.com/capdir/capdir/breaker"
)

// A dispatcher's view: check before the call, observe after it.
func Example() {
	cfg := breaker.Config{} // 8 strikes, 1 hour
	now := time.Date(2026, 7, 26, 4, 0, 0, 0, time.UTC)
	s := breaker.State{Key: "GROK_CHAT"}

	for range 8 {
		d := cfg.Check(s, now, "3fa1", "")
		s = cfg.Observe(s, breaker.Observation{
			At: now, Kind: breaker.Classify(401, true), CredTag: "3fa1", Generation: d.Generation,
		})
	}
	if d := cfg.Check(s, now, "3fa1", ""); d.Open {
		fmt.Println(breaker.Message(s.Key, cfg.Threshold))
		fmt.Println("closes at", d.ClosesAt.Format(time.RFC3339))
	}
	fmt.Println("after rotation open:", cfg.Check(s, now, "9c07", "").Open)
	fmt.Println("after an hour open:", cfg.Check(s, now.Add(time.Hour), "3fa1", "").Open)
	// Output:
	// ERR:breaker_open:GROK_CHAT — 8 consecutive auth failures; credential is dead until replaced.
	// closes at 2026-07-26T05:00:00Z
	// after rotation open: false
	// after an hour open: false
}

func ExampleConfig_Observe() {
	cfg := breaker.Config{Threshold: 2}
	t := time.Date(2026, 7, 26, 4, 0, 0, 0, time.UTC)
	s := breaker.State{Key: "K"}
	gen := cfg.Check(s, t, "", "").Generation // generation 0 for the call about to start

	s = cfg.Observe(s, breaker.Observation{At: t, Kind: breaker.AuthFailure, Generation: gen})
	s = cfg.Observe(s, breaker.Observation{At: t, Kind: breaker.NotCounted, Generation: gen})
	s = cfg.Observe(s, breaker.Observation{At: t, Kind: breaker.AuthFailure, Generation: gen})
	fmt.Println(s.Strikes, s.Open, s.Generation)

	// A result from a call started before the trip arrives late: dropped.
	s = cfg.Observe(s, breaker.Observation{At: t, Kind: breaker.UpstreamOther, Generation: gen})
	fmt.Println(s.Strikes, s.Open, s.Generation)
	// Output:
	// 2 true 1
	// 2 true 1
}

func ExampleConfig_Reset() {
	cfg := breaker.Config{Threshold: 1}
	t := time.Date(2026, 7, 26, 4, 0, 0, 0, time.UTC)
	s := cfg.Observe(breaker.State{Key: "K"}, breaker.Observation{At: t, Kind: breaker.AuthFailure})
	fmt.Println(s.Open, s.Generation)
	s = cfg.Reset(s)
	fmt.Println(s.Open, s.Generation, cfg.Check(s, t, "", "").Open)
	// Output:
	// true 1
	// false 3 false
}

func ExampleClassify() {
	fmt.Println(breaker.Classify(401, true), breaker.Classify(503, true), breaker.Classify(0, false))
	// Output: auth_failure upstream_other not_counted
}

func ExampleConfig_Check() {
	cfg := breaker.Config{Threshold: 1, Cooldown: time.Minute}
	t := time.Date(2026, 7, 26, 4, 0, 0, 0, time.UTC)
	s := cfg.Observe(breaker.State{Key: "K"}, breaker.Observation{At: t, Kind: breaker.AuthFailure, CredTag: "aa"})
	fmt.Println(cfg.Check(s, t.Add(time.Minute-time.Nanosecond), "aa", "").Open)
	d := cfg.Check(s, t.Add(time.Minute), "aa", "")
	fmt.Println(d.Open, d.Generation)
	// Output:
	// true
	// false 2
}
