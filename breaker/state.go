package breaker

import (
	"slices"
	"time"
)

// State is one row's breaker. The zero State (with Key set) is closed with no strikes.
// It is a value: change it only by folding events with Config.Observe and
// Config.Reset, in log order.
type State struct {
	// Key is the row key; the breaker functions never change it.
	Key string `json:"key"`
	// Strikes is the length of the owner's current run of consecutive auth
	// failures (any caller's other answer ends it); it stays at the threshold while
	// open, however the breaker opened.
	Strikes int `json:"strikes"`
	// Open is true from the trip until a close; see Config.Check for whether an open
	// State still refuses at a given time.
	Open bool `json:"open"`
	// OpenedAt is the At of the observation that tripped it; zero when closed.
	OpenedAt time.Time `json:"opened_at,omitzero"`
	// CredTag is the credential tag of the current run of strikes (the tag in use when
	// it tripped, once open); empty when there is no run or no strike named one.
	CredTag string `json:"cred_tag,omitempty"`
	// Generation advances on every open, close and reset; see the package comment.
	Generation uint64 `json:"generation"`
	// Callers are the runs of the callers other than the owner that have struck
	// (see the package comment, Fairness), ordered by Caller; none while open.
	// A State shares no Callers with another: Observe copies before it changes one.
	Callers []CallerRun `json:"callers,omitempty"`
}

// CallerRun is one caller's own run of consecutive auth failures.
type CallerRun struct {
	// Caller is who made the calls, as Observation.Caller names it.
	Caller string `json:"caller"`
	// Strikes is the length of the run; it stays at the threshold while the caller
	// is refused.
	Strikes int `json:"strikes"`
	// CredTag is the credential tag of the run, as State.CredTag is the owner's.
	CredTag string `json:"cred_tag,omitempty"`
	// OpenedAt is when the caller's run reached the threshold: the caller is
	// refused from then for the cooldown. Zero while it is not refused.
	OpenedAt time.Time `json:"opened_at,omitzero"`
}

// Equal reports whether s and o are the same State.
func (s State) Equal(o State) bool {
	return s.Key == o.Key && s.Strikes == o.Strikes && s.Open == o.Open && s.OpenedAt.Equal(o.OpenedAt) &&
		s.CredTag == o.CredTag && s.Generation == o.Generation && slices.Equal(s.Callers, o.Callers)
}

// Tripped reports whether s refuses calls, or refused them when last folded: the
// row is open, or caller's own run reached the threshold. Whether it still does
// depends on the time and the credential (Check); a caller that needs the
// credential's tag only for that can skip computing it when Tripped is false.
func (s State) Tripped(caller string) bool {
	if s.Open {
		return true
	}
	i, ok := s.callerIndex(caller)
	return ok && !s.Callers[i].OpenedAt.IsZero()
}

// callerIndex is where caller's run is in s.Callers, or would be inserted.
func (s State) callerIndex(caller string) (int, bool) {
	if caller == "" {
		return 0, false
	}
	return slices.BinarySearchFunc(s.Callers, caller, func(r CallerRun, c string) int {
		switch {
		case r.Caller < c:
			return -1
		case r.Caller > c:
			return 1
		}
		return 0
	})
}

// Observation is one call's outcome, as logged.
type Observation struct {
	// At is when the outcome was seen; not earlier than the Check that allowed the call.
	At time.Time `json:"at"`
	// Kind is the classified outcome (see Classify).
	Kind Kind `json:"kind"`
	// CredTag is the tag of the credential the call used; the one given to Check.
	CredTag string `json:"cred_tag,omitempty"`
	// Generation is Decision.Generation from the Check that allowed the call.
	Generation uint64 `json:"generation"`
	// Caller is who made the call: "" for the owner, whose own run opens the row
	// for everyone; any other caller's id (capdir uses its receipts' actor) counts
	// in that caller's run (see the package comment, Fairness).
	Caller string `json:"caller,omitempty"`
}

// Decision is the answer of Check.
type Decision struct {
	// Open means refuse the call.
	Open bool
	// Caller means the refusal is the caller's alone: its own run reached the
	// threshold, and the row is open to others. OpenedAt and ClosesAt are then
	// the caller's.
	Caller bool
	// OpenedAt and ClosesAt bound the open period; both zero when not open.
	OpenedAt, ClosesAt time.Time
	// Generation is the one the call's Observation must carry.
	Generation uint64
}

// Observe folds one call's outcome into s and returns the new State.
//
// First s is lazily closed if it is open and o.At has reached its ClosesAt, or
// o.CredTag is non-empty and differs from s.CredTag (this applies even when o is then
// dropped: the time has passed, or the credential has been replaced, regardless).
// Then o is dropped unless o.Generation equals the State's Generation, and ignored if
// the State is still open (the call should have been refused).
//
// The owner's outcome (o.Caller "") is then folded into the row: AuthFailure adds
// a strike (starting a new run if the tag was replaced) and opens the breaker at
// the threshold, UpstreamOther ends the run, and NotCounted does nothing. Any
// other caller's outcome is folded into that caller's own run the same way (one
// that is refused is ignored, as the row's is while open); UpstreamOther also ends
// the owner's run, as a working credential does. A caller's run that reaches the
// threshold refuses that caller for the cooldown, and opens the row for everyone
// when Quorum callers are refused at once.
func (c Config) Observe(s State, o Observation) State {
	c = c.effective()
	s = c.settle(s, o.At, o.CredTag)
	if o.Generation != s.Generation || s.Open {
		return s
	}
	if o.Caller != "" {
		return c.observeCaller(s, o)
	}
	switch o.Kind {
	case AuthFailure:
		if rotated(s.CredTag, o.CredTag) {
			s.Strikes = 0
		}
		s.Strikes++
		if o.CredTag != "" {
			s.CredTag = o.CredTag
		}
		if s.Strikes >= c.Threshold {
			s = c.trip(s, o.At, s.CredTag)
		}
	case UpstreamOther:
		s.Strikes = 0
		s.CredTag = ""
	}
	return s
}

// observeCaller folds o, the outcome of a call by a caller other than the owner,
// into s (settled, of o's generation, closed): into o.Caller's run, with every
// other run as it stands at o.At under o.CredTag (settleCaller). It opens the row
// when Quorum callers are then refused.
func (c Config) observeCaller(s State, o Observation) State {
	i, found := s.callerIndex(o.Caller)
	run := CallerRun{Caller: o.Caller}
	if found {
		run = c.settleCaller(s.Callers[i], o.At, o.CredTag)
	}
	if run.OpenedAt.IsZero() { // a refused caller's call should not have run: ignored
		switch o.Kind {
		case AuthFailure:
			run.Strikes++
			if o.CredTag != "" {
				run.CredTag = o.CredTag
			}
			if run.Strikes >= c.Threshold {
				run.Strikes, run.OpenedAt = c.Threshold, o.At.UTC()
			}
		case UpstreamOther: // the credential works: the caller's run and the owner's end
			run = CallerRun{Caller: o.Caller}
			s.Strikes, s.CredTag = 0, ""
		}
	}
	callers := make([]CallerRun, 0, len(s.Callers)+1)
	refused := 0
	keep := func(r CallerRun) {
		if r.Strikes > 0 {
			callers = append(callers, r)
			if !r.OpenedAt.IsZero() {
				refused++
			}
		}
	}
	for j, r := range s.Callers {
		if j == i {
			keep(run)
			if found {
				continue
			}
		}
		keep(c.settleCaller(r, o.At, o.CredTag))
	}
	if !found && i == len(s.Callers) {
		keep(run)
	}
	s.Callers = callers
	if o.Kind == AuthFailure && refused >= c.Quorum {
		return c.trip(s, o.At, run.CredTag)
	}
	return s
}

// trip opens s at time at, remembering the credential tag of the run that
// opened it; the callers' runs end with it.
func (c Config) trip(s State, at time.Time, credTag string) State {
	return State{Key: s.Key, Strikes: c.Threshold, Open: true, OpenedAt: at.UTC(), CredTag: credTag, Generation: s.Generation + 1}
}

// settleCaller is r as it stands at time at with the credential tagged credTag:
// a refusal whose cooldown has passed is over, and so is a run under a
// credential since replaced (a non-empty credTag that is not r's). Observe and
// Check share it, as they share settle.
func (c Config) settleCaller(r CallerRun, at time.Time, credTag string) CallerRun {
	expired := !r.OpenedAt.IsZero() && !at.Before(r.OpenedAt.Add(c.Cooldown))
	if expired || rotated(r.CredTag, credTag) {
		return CallerRun{Caller: r.Caller}
	}
	return r
}

// Reset folds an owner reset (capdir's BREAKER_RESET event)
// into s: closed, no strikes, and the Generation advanced by 2, so every call started
// before the reset is dropped.
func (c Config) Reset(s State) State {
	return State{Key: s.Key, Generation: s.Generation + 2}
}

// Check reports whether a call made now by caller ("" for the owner) with the
// credential tagged credTag must be refused. It does not change s: it answers for
// s as lazily closed at now and credTag (see Observe), so Open is false once the
// cooldown has passed (from ClosesAt exactly) or credTag is a replacement, and
// Generation is then the closed State's. When the row is closed, a caller whose
// own run reached the threshold is still refused (Decision.Caller), under the
// same rules for its cooldown and a replaced credential.
func (c Config) Check(s State, now time.Time, credTag, caller string) Decision {
	c = c.effective()
	s = c.settle(s, now, credTag)
	d := Decision{Open: s.Open, Generation: s.Generation}
	if s.Open {
		d.OpenedAt = s.OpenedAt
		d.ClosesAt = c.ClosesAt(s)
		return d
	}
	if i, ok := s.callerIndex(caller); ok {
		if r := c.settleCaller(s.Callers[i], now, credTag); !r.OpenedAt.IsZero() {
			d.Open, d.Caller, d.OpenedAt, d.ClosesAt = true, true, r.OpenedAt, r.OpenedAt.Add(c.Cooldown)
		}
	}
	return d
}

// ClosesAt is when an open s stops refusing calls (OpenedAt plus the cooldown), or the
// zero time if s is not open.
func (c Config) ClosesAt(s State) time.Time {
	if !s.Open {
		return time.Time{}
	}
	return s.OpenedAt.Add(c.effective().Cooldown)
}

// settle is lazy closing: s closed if it is open and, at time at with credential tag
// credTag, its cooldown has passed or its credential has been replaced. Observe and
// Check share it, so a Check's Generation is the one Observe will find.
func (c Config) settle(s State, at time.Time, credTag string) State {
	if !s.Open {
		return s
	}
	if at.Before(c.ClosesAt(s)) && !rotated(s.CredTag, credTag) {
		return s
	}
	return State{Key: s.Key, Generation: s.Generation + 1}
}

// rotated reports whether tag names a different credential from the remembered one.
// An empty tag (no credential) never does.
func rotated(remembered, tag string) bool {
	return tag != "" && tag != remembered
}
