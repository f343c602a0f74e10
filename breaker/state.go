package breaker

import "time"

// State is one row's breaker. The zero State (with Key set) is closed with no strikes.
// It is a value: change it only by folding events with Config.Observe and
// Config.Reset, in log order.
type State struct {
	// Key is the row key; the breaker functions never change it.
	Key string `json:"key"`
	// Strikes is the length of the current run of consecutive auth failures; it stays
	// at the threshold while open.
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
}

// Decision is the answer of Check.
type Decision struct {
	// Open means refuse the call.
	Open bool
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
// the State is still open (the call should have been refused). Otherwise
// AuthFailure adds a strike (starting a new run if the tag was replaced) and trips
// the breaker at the threshold, UpstreamOther ends the run, and NotCounted does
// nothing.
func (c Config) Observe(s State, o Observation) State {
	c = c.effective()
	s = c.settle(s, o.At, o.CredTag)
	if o.Generation != s.Generation || s.Open {
		return s
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
			s.Strikes = c.Threshold
			s.Open = true
			s.OpenedAt = o.At.UTC()
			s.Generation++
		}
	case UpstreamOther:
		s.Strikes = 0
		s.CredTag = ""
	}
	return s
}

// Reset folds an owner reset (capdir's BREAKER_RESET event)
// into s: closed, no strikes, and the Generation advanced by 2, so every call started
// before the reset is dropped.
func (c Config) Reset(s State) State {
	return State{Key: s.Key, Generation: s.Generation + 2}
}

// Check reports whether a call made now with the credential tagged credTag must be
// refused. It does not change s: it answers for s as lazily closed at now and
// credTag (see Observe), so Open is false once the cooldown has passed (from ClosesAt
// exactly) or credTag is a replacement, and Generation is then the closed State's.
func (c Config) Check(s State, now time.Time, credTag string) Decision {
	c = c.effective()
	s = c.settle(s, now, credTag)
	d := Decision{Open: s.Open, Generation: s.Generation}
	if s.Open {
		d.OpenedAt = s.OpenedAt
		d.ClosesAt = c.ClosesAt(s)
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
