package mcprunner

import "testing"

// A call whose session another call dropped first hands drop a session that is
// no longer there: nothing is closed twice, and nothing panics.
func TestPoolDropOfADroppedSession(t *testing.T) {
	p := &pool{cfg: &Config{}, sessions: map[string]*session{}}
	if _, err := p.entry("up"); err != nil { // the session of a connection that failed: no client session
		t.Fatal(err)
	}
	p.drop("up", nil)
	if s := p.sessions["up"]; s == nil || s.cur != nil {
		t.Fatalf("session after drop: %+v", s)
	}
}
