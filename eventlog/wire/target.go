package wire

import (
	"strconv"
	"strings"
	"unicode"
)

// Reasons a subject cannot be a row's target, as SubjectError.Reason spells them.
// The nats runner puts them in its literals (ERR:nats:bad_target:<reason>:<subject>,
// ERR:nats:reserved_subject:<subject>).
const (
	SubjectEmpty      = "empty_subject"
	SubjectWhitespace = "whitespace"
	SubjectWildcard   = "wildcard"
	SubjectEmptyToken = "empty_token"
	SubjectReserved   = "reserved_subject"
)

// SubjectError says why a subject cannot be a row's target. It unwraps to
// ErrReservedSubject when Reason is SubjectReserved, else to ErrBadSubject.
type SubjectError struct {
	Subject string
	Reason  string // one of the Subject* reasons
}

// subjectWhy is each reason in words a row's author can act on.
var subjectWhy = map[string]string{
	SubjectEmpty:      "is empty",
	SubjectWhitespace: "contains whitespace or a control character",
	SubjectWildcard:   "contains a wildcard ('*' or '>'): a row addresses one literal subject",
	SubjectEmptyToken: "has an empty token (a leading, trailing or doubled '.')",
	SubjectReserved: "is reserved: subjects whose first token starts with '$' ($JS., $SYS., $KV., $O., $SRV., ...) are NATS's own API, " +
		"_INBOX. carries other callers' replies and capdir. is capdir's own log",
}

// Error says what is wrong, e.g. subject "svc.*" contains a wildcard (...).
func (e *SubjectError) Error() string {
	return "subject " + strconv.Quote(e.Subject) + " " + subjectWhy[e.Reason]
}

// Unwrap returns ErrReservedSubject or ErrBadSubject.
func (e *SubjectError) Unwrap() error {
	if e.Reason == SubjectReserved {
		return ErrReservedSubject
	}
	return ErrBadSubject
}

// ReservedSubject reports whether subject belongs to something no row may address:
// its first token starts with '$' (NATS's system and JetStream APIs: $JS.API.>,
// $SYS.>, $KV.>, $O.>, $SRV.>, $JSC.>, ...), is _INBOX (the replies other callers
// wait for) or is capdir (every subject of capdir's log and receipt notices). Tokens
// are compared ignoring case, so a near-miss spelling is refused too.
func ReservedSubject(subject string) bool {
	first, _, _ := strings.Cut(subject, ".")
	return strings.HasPrefix(first, "$") ||
		strings.EqualFold(first, "_INBOX") ||
		strings.EqualFold(first, capdirToken)
}

// CheckTargetSubject reports why subject cannot be the subject a row sends its
// requests to, or nil: it must be one literal NATS subject (no whitespace or control
// characters, no '*' or '>', no empty token) and not ReservedSubject. The error is a
// *SubjectError. The write path and the nats runner both use it, so a row refused at
// the door is refused again should it reach a runner another way.
func CheckTargetSubject(subject string) error {
	reason := ""
	switch {
	case subject == "":
		reason = SubjectEmpty
	case strings.IndexFunc(subject, func(c rune) bool { return c <= ' ' || c == 0x7f || unicode.IsSpace(c) }) >= 0:
		reason = SubjectWhitespace
	case strings.ContainsAny(subject, "*>"):
		reason = SubjectWildcard
	case strings.HasPrefix(subject, ".") || strings.HasSuffix(subject, ".") || strings.Contains(subject, ".."):
		reason = SubjectEmptyToken
	case ReservedSubject(subject):
		reason = SubjectReserved
	default:
		return nil
	}
	return &SubjectError{Subject: subject, Reason: reason}
}
