package answer

import "time"

// Breaker is one row's auth breaker (GET /api/breaker).
type Breaker struct {
	Key     string `json:"key"`
	Strikes int    `json:"strikes"`
	// Open is true when the breaker refuses calls now: tripped, its cooldown not
	// passed and the credential its row names not replaced.
	Open     bool       `json:"open"`
	OpenedAt *time.Time `json:"opened_at,omitempty"`
	ClosesAt *time.Time `json:"closes_at,omitempty"`
	// Message is the refusal every call gets while open.
	Message string `json:"message,omitempty"`
	// RefusedCallers are the callers other than the owner refused now by their
	// own runs of auth failures, while the row stays open to everyone else; by
	// caller. A row open for everyone lists none.
	RefusedCallers []RefusedCaller `json:"refused_callers,omitempty"`
}

// RefusedCaller is one caller its own auth failures refuse on a row.
type RefusedCaller struct {
	Caller   string    `json:"caller"`
	OpenedAt time.Time `json:"opened_at"`
	ClosesAt time.Time `json:"closes_at"`
}
