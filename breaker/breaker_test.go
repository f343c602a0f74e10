package breaker

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 7, 26, 4, 36, 19, 0, time.UTC)

// clock is a fake clock: tests move it by hand.
type clock struct{ now time.Time }

func (c *clock) advance(d time.Duration) time.Time { c.now = c.now.Add(d); return c.now }

// step is one thing that happens to a breaker in a script.
type step struct {
	adv   time.Duration // move the clock first
	reset bool          // an owner reset instead of a call
	kind  Kind          // the call's outcome
	tag   string        // the credential tag of the call
	who   string        // the caller: "" for the owner
	// stale makes the observation carry the generation of the Check made this many
	// steps earlier instead of its own (a result that arrives late).
	stale int
}

// run plays a script the way capdir does: Check, and if allowed, Observe with the
// Decision's Generation. It returns the state, the decisions, and the logged events.
func run(t *testing.T, c Config, steps []step) (State, []Decision, []event) {
	t.Helper()
	clk := &clock{now: t0}
	s := State{Key: "K"}
	var ds []Decision
	var log []event
	for i, st := range steps {
		now := clk.advance(st.adv)
		if st.reset {
			s = c.Reset(s)
			log = append(log, event{reset: true})
			ds = append(ds, Decision{})
		} else {
			d := c.Check(s, now, st.tag, st.who)
			ds = append(ds, d)
			if !d.Open {
				gen := d.Generation
				if st.stale > 0 {
					gen = ds[i-st.stale].Generation
				}
				o := Observation{At: now, Kind: st.kind, CredTag: st.tag, Generation: gen, Caller: st.who}
				s = c.Observe(s, o)
				log = append(log, event{obs: o})
			}
		}
		mustCheck(t, c, s)
	}
	return s, ds, log
}

type event struct {
	reset bool
	obs   Observation
}

func fold(c Config, evs []event) State {
	s := State{Key: "K"}
	for _, e := range evs {
		if e.reset {
			s = c.Reset(s)
		} else {
			s = c.Observe(s, e.obs)
		}
	}
	return s
}

// mustCheck is the consistency check run after every step.
func mustCheck(t *testing.T, c Config, s State) {
	t.Helper()
	c = c.effective()
	var errs []error
	if s.Key != "K" {
		errs = append(errs, fmt.Errorf("key changed to %q", s.Key))
	}
	if s.Strikes < 0 || s.Strikes > c.Threshold {
		errs = append(errs, fmt.Errorf("strikes %d out of [0,%d]", s.Strikes, c.Threshold))
	}
	if s.Open && (s.Strikes != c.Threshold || s.OpenedAt.IsZero()) {
		errs = append(errs, fmt.Errorf("open with strikes %d, opened_at %v", s.Strikes, s.OpenedAt))
	}
	if !s.Open && (s.Strikes == c.Threshold || !s.OpenedAt.IsZero()) {
		errs = append(errs, fmt.Errorf("closed with strikes %d, opened_at %v", s.Strikes, s.OpenedAt))
	}
	if s.Strikes == 0 && s.CredTag != "" && len(s.Callers) == 0 {
		errs = append(errs, fmt.Errorf("no strikes but cred_tag %q", s.CredTag))
	}
	if s.Open && len(s.Callers) > 0 {
		errs = append(errs, fmt.Errorf("open with caller runs %+v", s.Callers))
	}
	for i, r := range s.Callers {
		if r.Caller == "" || i > 0 && s.Callers[i-1].Caller >= r.Caller {
			errs = append(errs, fmt.Errorf("caller runs not by caller, once each: %+v", s.Callers))
		}
		if r.Strikes < 1 || r.Strikes > c.Threshold || (r.Strikes == c.Threshold) == r.OpenedAt.IsZero() {
			errs = append(errs, fmt.Errorf("caller run %+v", r))
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("inconsistent state %+v: %v", s, err)
	}
}

// interleave is len(ss) steps taking each of sts in turn.
func (ss steps) interleave(sts ...step) []step {
	out := make([]step, 0, len(ss)*len(sts))
	for range ss {
		out = append(out, sts...)
	}
	return out
}

type steps []step

func repeat(n int, st step) steps {
	out := make([]step, n)
	for i := range out {
		out[i] = st
	}
	return out
}

func cat(parts ...[]step) []step {
	var out []step
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

var (
	s401  = step{kind: AuthFailure, tag: "a1"}
	s403  = step{kind: AuthFailure, tag: "a1"}
	s200  = step{kind: UpstreamOther, tag: "a1"}
	s500  = step{kind: UpstreamOther, tag: "a1"}
	sNone = step{kind: NotCounted, tag: "a1"}
)

func TestScripts(t *testing.T) {
	h := DefaultCooldown
	tests := []struct {
		name    string
		cfg     Config
		steps   []step
		strikes int
		open    bool
		gen     uint64
		// refusedLast: the final step's Check refused the call.
		refusedLast bool
	}{
		{"seven strikes stay closed", Config{}, repeat(7, s401), 7, false, 0, false},
		{"eighth strike trips", Config{}, repeat(8, s401), 8, true, 1, false},
		{"401 and 403 both count", Config{}, cat(repeat(4, s401), repeat(4, s403)), 8, true, 1, false},
		{"ninth call refused", Config{}, repeat(9, s401), 8, true, 1, true},
		{"200 in between resets", Config{}, cat(repeat(7, s401), []step{s200}, repeat(7, s401)), 7, false, 0, false},
		{"500 in between resets", Config{}, cat(repeat(7, s401), []step{s500}, repeat(7, s401)), 7, false, 0, false},
		{"404 resets", Config{}, cat(repeat(7, s401), []step{{kind: Classify(404, true), tag: "a1"}}), 0, false, 0, false},
		{"not counted changes nothing", Config{}, cat(repeat(4, s401), repeat(3, sNone), repeat(3, s401)), 7, false, 0, false},
		{"not counted then trips", Config{}, cat(repeat(7, s401), []step{sNone, s401}), 8, true, 1, false},
		{"threshold 3", Config{Threshold: 3}, repeat(3, s401), 3, true, 1, false},
		{"refused one ns before cooldown", Config{},
			cat(repeat(8, s401), []step{{adv: h - time.Nanosecond, kind: AuthFailure, tag: "a1"}}), 8, true, 1, true},
		{"closes at cooldown exactly", Config{},
			cat(repeat(8, s401), []step{{adv: h, kind: UpstreamOther, tag: "a1"}}), 0, false, 2, false},
		{"strike after cooldown starts a new run", Config{},
			cat(repeat(8, s401), []step{{adv: h, kind: AuthFailure, tag: "a1"}}), 1, false, 2, false},
		{"retrips after cooldown", Config{},
			cat(repeat(8, s401), []step{{adv: h, kind: AuthFailure, tag: "a1"}}, repeat(7, s401)), 8, true, 3, false},
		{"custom cooldown", Config{Cooldown: time.Minute},
			cat(repeat(8, s401), []step{{adv: time.Minute, kind: AuthFailure, tag: "a1"}}), 1, false, 2, false},
		{"reset closes", Config{}, cat(repeat(8, s401), []step{{reset: true}}), 0, false, 3, false},
		{"reset then calls allowed", Config{}, cat(repeat(8, s401), []step{{reset: true}, s401}), 1, false, 3, false},
		{"reset of closed clears strikes", Config{}, cat(repeat(5, s401), []step{{reset: true}}), 0, false, 2, false},
		{"rotated tag closes at once", Config{},
			cat(repeat(8, s401), []step{{kind: UpstreamOther, tag: "b2"}}), 0, false, 2, false},
		{"rotated tag strike counts once closed", Config{},
			cat(repeat(8, s401), []step{{kind: AuthFailure, tag: "b2"}}), 1, false, 2, false},
		{"old tag still refused", Config{},
			cat(repeat(8, s401), []step{s401}), 8, true, 1, true},
		{"empty tag is not a rotation", Config{},
			cat(repeat(8, s401), []step{{kind: UpstreamOther, tag: ""}}), 8, true, 1, true},
		{"supplying a missing credential is a rotation", Config{},
			cat(repeat(8, step{kind: AuthFailure}), []step{{kind: UpstreamOther, tag: "a1"}}), 0, false, 2, false},
		{"rotation restarts a closed run", Config{},
			cat(repeat(7, s401), []step{{kind: AuthFailure, tag: "b2"}}), 1, false, 0, false},
		{"empty tag continues a run", Config{},
			cat(repeat(7, s401), []step{{kind: AuthFailure}}), 8, true, 1, false},
		{"stale strike dropped after trip", Config{},
			cat(repeat(8, s401), []step{{adv: h, kind: UpstreamOther, tag: "a1"}, {kind: AuthFailure, tag: "a1", stale: 2}}),
			0, false, 2, false},
		{"stale 200 dropped after reset", Config{},
			cat(repeat(5, s401), []step{{reset: true}, s401, {kind: UpstreamOther, tag: "a1", stale: 3}}), 1, false, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ds, _ := run(t, tt.cfg, tt.steps)
			if s.Strikes != tt.strikes || s.Open != tt.open || s.Generation != tt.gen {
				t.Errorf("got strikes=%d open=%v gen=%d, want strikes=%d open=%v gen=%d",
					s.Strikes, s.Open, s.Generation, tt.strikes, tt.open, tt.gen)
			}
			if got := ds[len(ds)-1].Open; got != tt.refusedLast {
				t.Errorf("last Check open = %v, want %v", got, tt.refusedLast)
			}
		})
	}
}

// Fairness: a caller other than the owner cannot deny a row to anyone but itself
// by the arguments it chooses, and a dead credential still opens the row for
// everyone: the owner's own run, or Quorum callers each refused.
func TestFairness(t *testing.T) {
	h := DefaultCooldown
	tok := func(who string, kind Kind) step { return step{kind: kind, tag: "a1", who: who} }
	a401, b401, c401 := tok("token:a", AuthFailure), tok("token:b", AuthFailure), tok("token:c", AuthFailure)
	type ask struct {
		who    string
		adv    time.Duration
		tag    string
		open   bool
		caller bool // the refusal is the asker's alone
	}
	tests := []struct {
		name    string
		cfg     Config
		steps   []step
		strikes int // the owner's
		open    bool
		asks    []ask // Checks after the script, each at its own offset from the last step
	}{
		{"a caller's 8 refuse it alone", Config{}, repeat(8, a401), 0, false, []ask{
			{who: "token:a", open: true, caller: true}, {who: ""}, {who: "token:b"},
		}},
		{"a caller's strikes are not the owner's", Config{}, cat(repeat(7, a401), []step{s401}), 1, false, []ask{
			{who: ""}, {who: "token:a"},
		}},
		{"two callers refused are not a quorum", Config{}, cat(repeat(8, a401), repeat(8, b401)), 0, false, []ask{
			{who: ""}, {who: "token:c"}, {who: "token:b", open: true, caller: true},
		}},
		{"three callers refused open the row", Config{}, cat(repeat(8, a401), repeat(8, b401), repeat(8, c401)), 8, true, []ask{
			{who: "", open: true}, {who: "token:d", open: true}, {who: "token:d", adv: h},
		}},
		{"interleaved callers open the row", Config{}, repeat(8, step{}).interleave(a401, b401, c401), 8, true, []ask{
			{who: "", open: true},
		}},
		{"quorum 2", Config{Quorum: 2}, cat(repeat(8, a401), repeat(8, b401)), 8, true, []ask{{who: "", open: true}}},
		{"the owner's 8 open it for every caller", Config{}, repeat(8, s401), 8, true, []ask{
			{who: "token:a", open: true}, {who: "token:a", tag: "b2"},
		}},
		{"a caller's success ends the owner's run", Config{}, cat(repeat(7, s401), []step{tok("token:b", UpstreamOther), s401}), 1, false, nil},
		{"a caller's success ends its own run", Config{}, cat(repeat(7, a401), []step{tok("token:a", UpstreamOther)}, repeat(7, a401)), 0, false, []ask{
			{who: "token:a"},
		}},
		{"the owner's success leaves a caller's run", Config{}, cat(repeat(7, a401), []step{s200, a401}), 0, false, []ask{
			{who: "token:a", open: true, caller: true},
		}},
		{"a caller's refusal lasts the cooldown", Config{}, repeat(8, a401), 0, false, []ask{
			{who: "token:a", adv: h - time.Nanosecond, open: true, caller: true}, {who: "token:a", adv: h},
		}},
		{"a replaced credential lifts a caller's refusal", Config{}, repeat(8, a401), 0, false, []ask{
			{who: "token:a", tag: "b2"}, {who: "token:a", open: true, caller: true},
		}},
		{"quorum counts refusals in force", Config{},
			cat(repeat(8, a401), []step{{adv: h, kind: AuthFailure, tag: "a1", who: "token:b"}}, repeat(7, b401), repeat(8, c401)), 0, false, []ask{
				{who: ""}, {who: "token:b", open: true, caller: true}, {who: "token:a"},
			}},
		{"quorum counts one credential", Config{},
			cat(repeat(8, a401), repeat(8, b401), repeat(8, step{kind: AuthFailure, tag: "b2", who: "token:c"})), 0, false, []ask{
				{who: "", tag: "b2"}, {who: "token:c", tag: "b2", open: true, caller: true},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ds, log := run(t, tt.cfg, tt.steps)
			for i, d := range ds {
				if d.Open {
					t.Fatalf("step %d (%+v) refused: %+v", i, tt.steps[i], d)
				}
			}
			if s.Strikes != tt.strikes || s.Open != tt.open {
				t.Errorf("got strikes=%d open=%v, want strikes=%d open=%v (%+v)", s.Strikes, s.Open, tt.strikes, tt.open, s)
			}
			last := t0
			for _, st := range tt.steps {
				last = last.Add(st.adv)
			}
			for _, a := range tt.asks {
				tag := a.tag
				if tag == "" {
					tag = "a1"
				}
				d := tt.cfg.Check(s, last.Add(a.adv), tag, a.who)
				if d.Open != a.open || d.Caller != a.caller {
					t.Errorf("Check for %q at +%v with %s = %+v; want open=%v caller=%v", a.who, a.adv, tag, d, a.open, a.caller)
				}
				if d.Open && !d.ClosesAt.Equal(d.OpenedAt.Add(h)) {
					t.Errorf("Check for %q: closes at %v, opened at %v", a.who, d.ClosesAt, d.OpenedAt)
				}
			}
			if got := fold(tt.cfg, log); !got.Equal(s) {
				t.Errorf("fold of the log = %+v, want %+v", got, s)
			}
		})
	}
}

// A refused caller's result (a call that should not have run) is ignored; so is
// every caller's while the row is open.
func TestRefusedCallerObservationIgnored(t *testing.T) {
	c := Config{}
	s, _, _ := run(t, c, repeat(8, step{kind: AuthFailure, tag: "a1", who: "token:a"}))
	for _, k := range []Kind{AuthFailure, UpstreamOther, NotCounted} {
		o := Observation{At: t0.Add(time.Minute), Kind: k, CredTag: "a1", Generation: s.Generation, Caller: "token:a"}
		if got := c.Observe(s, o); !got.Equal(s) {
			t.Errorf("%v from a refused caller changed state: %+v -> %+v", k, s, got)
		}
	}
}

func TestCooldownBoundary(t *testing.T) {
	c := Config{}
	s, _, _ := run(t, c, repeat(8, s401))
	opened := s.OpenedAt
	if !opened.Equal(t0) {
		t.Fatalf("OpenedAt = %v, want %v", opened, t0)
	}
	closes := c.ClosesAt(s)
	if want := t0.Add(time.Hour); !closes.Equal(want) {
		t.Fatalf("ClosesAt = %v, want %v", closes, want)
	}
	d := c.Check(s, closes.Add(-time.Nanosecond), "a1", "")
	if !d.Open || !d.OpenedAt.Equal(opened) || !d.ClosesAt.Equal(closes) || d.Generation != 1 {
		t.Errorf("1ns before: %+v", d)
	}
	d = c.Check(s, closes, "a1", "")
	if d.Open || !d.ClosesAt.IsZero() || !d.OpenedAt.IsZero() || d.Generation != 2 {
		t.Errorf("at ClosesAt: %+v", d)
	}
	if got := c.ClosesAt(c.Reset(s)); !got.IsZero() {
		t.Errorf("ClosesAt of closed = %v", got)
	}
}

// An observation made under a rotated credential after a Check that returned closed
// carries the Check's generation and counts; so does one made after the cooldown.
func TestLazyCloseGenerationMatches(t *testing.T) {
	c := Config{}
	s, _, _ := run(t, c, repeat(8, s401))
	now := t0.Add(time.Minute)
	for _, tc := range []struct {
		name string
		at   time.Time
		tag  string
	}{
		{"rotation", now, "b2"},
		{"cooldown", t0.Add(time.Hour), "a1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := c.Check(s, tc.at, tc.tag, "")
			if d.Open || d.Generation != s.Generation+1 {
				t.Fatalf("Check = %+v", d)
			}
			got := c.Observe(s, Observation{At: tc.at.Add(time.Second), Kind: AuthFailure, CredTag: tc.tag, Generation: d.Generation})
			want := State{Key: "K", Strikes: 1, CredTag: tc.tag, Generation: d.Generation}
			if !got.Equal(want) {
				t.Errorf("Observe = %+v, want %+v", got, want)
			}
		})
	}
}

// A reset racing a Check that predicted a lazy close lands on a different generation,
// so the call started before the reset is dropped.
func TestResetSkipsPredictedGeneration(t *testing.T) {
	c := Config{}
	s, _, _ := run(t, c, repeat(8, s401))
	d := c.Check(s, t0.Add(time.Minute), "b2", "")
	s = c.Reset(s)
	got := c.Observe(s, Observation{At: t0.Add(2 * time.Minute), Kind: AuthFailure, CredTag: "b2", Generation: d.Generation})
	if !got.Equal(s) {
		t.Errorf("observation from before the reset counted: %+v -> %+v", s, got)
	}
}

// A dropped observation still closes an open breaker whose time has passed.
func TestDroppedObservationStillSettles(t *testing.T) {
	c := Config{}
	s, _, _ := run(t, c, repeat(8, s401))
	got := c.Observe(s, Observation{At: t0.Add(time.Hour), Kind: AuthFailure, CredTag: "a1", Generation: 0})
	want := State{Key: "K", Generation: 2}
	if !got.Equal(want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// Calls that reach the upstream while open (they should have been refused) are ignored.
func TestObservationWhileOpenIgnored(t *testing.T) {
	c := Config{}
	s, _, _ := run(t, c, repeat(8, s401))
	for _, k := range []Kind{AuthFailure, UpstreamOther, NotCounted} {
		if got := c.Observe(s, Observation{At: t0.Add(time.Minute), Kind: k, CredTag: "a1", Generation: s.Generation}); !got.Equal(s) {
			t.Errorf("%v while open changed state: %+v", k, got)
		}
	}
}

func TestFoldDeterminism(t *testing.T) {
	c := Config{Threshold: 4, Cooldown: 10 * time.Minute}
	script := cat(
		repeat(3, s401), []step{s200, sNone}, repeat(4, s403),
		[]step{{adv: 5 * time.Minute, kind: AuthFailure, tag: "a1"}},
		[]step{{adv: 5 * time.Minute, kind: AuthFailure, tag: "a1"}},
		repeat(2, step{adv: time.Second, kind: AuthFailure, tag: "a1"}),
		[]step{{kind: UpstreamOther, tag: "c3", stale: 1}},
		[]step{{kind: AuthFailure, tag: "c3"}, {reset: true}, {kind: AuthFailure, tag: "c3", stale: 2}},
		repeat(4, step{kind: AuthFailure, tag: "c3"}),
		[]step{{reset: true}}, repeat(5, step{kind: AuthFailure, tag: "c3", who: "token:a"}),
		repeat(2, step{kind: AuthFailure, tag: "c3", who: "token:b"}), []step{{kind: UpstreamOther, tag: "c3", who: "token:c"}},
	)
	live, _, log := run(t, c, script)
	if len(live.Callers) != 2 {
		t.Fatalf("the script should end with two callers' runs: %+v", live)
	}
	a, b := fold(c, log), fold(c, log)
	if !a.Equal(b) || !a.Equal(live) {
		t.Fatalf("fold not deterministic:\nlive %+v\na    %+v\nb    %+v", live, a, b)
	}
	// The log survives JSON, as it does in the event store.
	raw, err := json.Marshal(log2json(log))
	if err != nil {
		t.Fatal(err)
	}
	var back []jsonEvent
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if got := fold(c, json2log(back)); !got.Equal(live) {
		t.Errorf("fold after JSON round trip = %+v, want %+v", got, live)
	}
}

type jsonEvent struct {
	Reset bool         `json:"reset,omitempty"`
	Obs   *Observation `json:"obs,omitempty"`
}

func log2json(evs []event) []jsonEvent {
	out := make([]jsonEvent, len(evs))
	for i, e := range evs {
		if e.reset {
			out[i].Reset = true
		} else {
			o := e.obs
			out[i].Obs = &o
		}
	}
	return out
}

func json2log(js []jsonEvent) []event {
	out := make([]event, len(js))
	for i, j := range js {
		if j.Reset {
			out[i].reset = true
		} else {
			out[i].obs = *j.Obs
		}
	}
	return out
}

func TestStateJSON(t *testing.T) {
	s, _, _ := run(t, Config{}, repeat(8, s401))
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"key":"K","strikes":8,"open":true,"opened_at":"2026-07-26T04:36:19Z","cred_tag":"a1","generation":1}`
	if string(raw) != want {
		t.Errorf("JSON = %s, want %s", raw, want)
	}
	var back State
	if err := json.Unmarshal(raw, &back); err != nil || !back.Equal(s) {
		t.Errorf("round trip = %+v, %v; want %+v", back, err, s)
	}
	withCallers, _, _ := run(t, Config{}, repeat(8, step{kind: AuthFailure, tag: "a1", who: "token:a"}))
	raw, _ = json.Marshal(withCallers)
	const wantCallers = `{"key":"K","strikes":0,"open":false,"generation":0,"callers":[{"caller":"token:a","strikes":8,"cred_tag":"a1","opened_at":"2026-07-26T04:36:19Z"}]}`
	if string(raw) != wantCallers {
		t.Errorf("JSON = %s, want %s", raw, wantCallers)
	}
	back = State{}
	if err := json.Unmarshal(raw, &back); err != nil || !back.Equal(withCallers) {
		t.Errorf("round trip = %+v, %v; want %+v", back, err, withCallers)
	}
	raw, _ = json.Marshal(State{Key: "K"})
	if got := string(raw); got != `{"key":"K","strikes":0,"open":false,"generation":0}` {
		t.Errorf("zero JSON = %s", got)
	}
	// A non-UTC observation time is stored in UTC so replays compare equal.
	loc := time.FixedZone("X", 3600)
	st := State{Key: "K"}
	for range 8 {
		st = Config{}.Observe(st, Observation{At: t0.In(loc), Kind: AuthFailure})
	}
	if st.OpenedAt != t0 {
		t.Errorf("OpenedAt = %#v, want UTC %#v", st.OpenedAt, t0)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		status  int
		reached bool
		want    Kind
	}{
		{401, true, AuthFailure},
		{403, true, AuthFailure},
		{200, true, UpstreamOther},
		{404, true, UpstreamOther},
		{500, true, UpstreamOther},
		{429, true, UpstreamOther},
		{401, false, NotCounted}, // refused or cancelled before the upstream answered
		{0, false, NotCounted},   // timeout
		{0, true, NotCounted},    // no HTTP status
		{600, true, NotCounted},
	}
	for _, tt := range tests {
		if got := Classify(tt.status, tt.reached); got != tt.want {
			t.Errorf("Classify(%d, %v) = %v, want %v", tt.status, tt.reached, got, tt.want)
		}
	}
}

func TestKindText(t *testing.T) {
	for _, k := range []Kind{NotCounted, AuthFailure, UpstreamOther} {
		b, err := k.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Kind
		if err := back.UnmarshalText(b); err != nil || back != k {
			t.Errorf("%v: round trip %v, %v", k, back, err)
		}
	}
	if _, err := Kind(9).MarshalText(); err == nil {
		t.Error("unknown kind marshalled")
	}
	var k Kind
	if err := k.UnmarshalText([]byte("strike")); err == nil {
		t.Error("unknown name unmarshalled")
	}
	if got := Kind(9).String(); got != "Kind(9)" {
		t.Errorf("String = %q", got)
	}
}

func TestMessage(t *testing.T) {
	const want = "ERR:breaker_open:GROK_CHAT \u2014 8 consecutive auth failures; credential is dead until replaced."
	if got := Message("GROK_CHAT", 8); got != want {
		t.Errorf("Message = %q", got)
	}
	if got := Message("GROK_CHAT", 0); got != want {
		t.Errorf("Message with default threshold = %q", got)
	}
	if !strings.Contains(Message("K", 3), "— 3 consecutive") {
		t.Error("threshold not in message")
	}
	var err error = &OpenError{Key: "GROK_CHAT", Threshold: 8}
	if !errors.Is(err, ErrOpen) || err.Error() != want {
		t.Errorf("OpenError = %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("zero config: %v", err)
	}
	if err := (Config{Threshold: 3, Cooldown: time.Minute}).Validate(); err != nil {
		t.Errorf("valid config: %v", err)
	}
	err := Config{Threshold: -1, Cooldown: -time.Second}.Validate()
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "threshold") || !strings.Contains(err.Error(), "cooldown") {
		t.Errorf("invalid config: %v", err)
	}
	// An invalid config still behaves as the default.
	s, _, _ := run(t, Config{Threshold: -1, Cooldown: -time.Second}, repeat(8, s401))
	if !s.Open || (Config{Cooldown: -1}).ClosesAt(s) != t0.Add(DefaultCooldown) {
		t.Errorf("invalid config did not fall back to defaults: %+v", s)
	}
}
