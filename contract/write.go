package contract

import (
	"errors"
	"slices"
	"time"
)

// Column defaults, applied by Create and Replace to fields the body does not name.
const (
	DefaultEnabled        = 1
	DefaultPlannerVisible = 1
	DefaultPlannerRank    = 100
	DefaultSensitive      = 0
)

// TimeLayout is the layout of the timestamps this package writes: RFC 3339, UTC,
// milliseconds, e.g. 2026-07-26T04:36:19.832Z.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime renders t in TimeLayout (converted to UTC).
func FormatTime(t time.Time) string {
	return t.UTC().Format(TimeLayout)
}

// PatchAllowList is the set of fields a PATCH may change, exactly the thirteen names of
// the reference. key is the path; sensitive and runner are set only by POST and PUT;
// updated_at and created_at are set by the server. Do not modify.
var PatchAllowList = []string{
	"type", "target", "auth", "content", "category", "allowed_categories", "seq",
	"enabled", "planner_visible", "planner_rank", "input_schema", "examples", "includes",
}

// Create builds a new row from a POST body. key and type are required; absent
// fields take the column defaults (enabled 1, planner_visible 1, planner_rank 100,
// sensitive 0, the rest empty); created_at and updated_at are now. The row must pass
// Validate and CheckCredentialOrigin, and the high_risk_missing_schema gate applies. missing_description does
// not: key and type are the only required fields of a POST.
//
// Errors: validation problems (*ValidationError, joined) or a *RefusalError.
func Create(f Fields, now time.Time) (Row, error) {
	r := fromFields(f)
	r.CreatedAt = FormatTime(now)
	r.UpdatedAt = r.CreatedAt
	if err := errors.Join(Validate(&r), CheckCredentialOrigin(&r)); err != nil {
		return Row{}, err
	}
	if highRiskMissingSchema(&r) {
		return Row{}, newRefusal(CodeHighRiskMissingSchema)
	}
	return r, nil
}

// Replace builds the row a PUT to /directory/<key> stores. The body is the whole row:
// absent fields take the column defaults, not the old values. A key in the body must
// equal the path key. created_at is kept from old, or is now when old is nil (a PUT
// that creates). Replace refuses any result that fails Validate,
// CheckCredentialOrigin or Hygiene.
//
// Errors: *ValidationError (ErrKeyMismatch, ErrRequired, ErrInvalid), joined, or a
// *RefusalError.
func Replace(key string, old *Row, f Fields, now time.Time) (Row, error) {
	if f.Has("key") && f.Values.Key != key {
		return Row{}, fieldErr(ErrKeyMismatch, "key",
			"is %q in the body but %q in the path; a PUT cannot rename a row (omit key, or send the path key)",
			f.Values.Key, key)
	}
	r := fromFields(f)
	r.Key = key
	r.UpdatedAt = FormatTime(now)
	r.CreatedAt = r.UpdatedAt
	if old != nil {
		r.CreatedAt = old.CreatedAt
	}
	if err := errors.Join(Validate(&r), CheckCredentialOrigin(&r)); err != nil {
		return Row{}, err
	}
	if v := Hygiene(&r); v != nil {
		return Row{}, v
	}
	return r, nil
}

// Patch merges a PATCH body into old. Only fields on PatchAllowList are applied;
// fields outside it are ignored and returned, in column order, as ignored. A body that
// names no allow-listed field returns ErrNoRecognizedFields and changes nothing.
// updated_at becomes now; created_at is kept.
//
// The hygiene gate is asymmetric: a code the merged row violates is refused only when
// old did not already violate it. Rows that predate the rules stay editable for
// unrelated maintenance, but no patch can introduce a new violation. The credential's
// origin is checked the same way (see patchedOrigin), except that a patch writing
// target or auth must always leave a literal origin.
//
// Errors: ErrNoRecognizedFields, *ValidationError (joined), or a *RefusalError.
func Patch(old Row, f Fields, now time.Time) (row Row, ignored []string, err error) {
	r := old
	r.Seq = cloneSeq(old.Seq)
	r.RowNum = 0
	applied := 0
	for _, name := range f.Names() {
		if !slices.Contains(PatchAllowList, name) {
			ignored = append(ignored, name)
			continue
		}
		copyColumn(columnIndex[name], &r, &f.Values)
		applied++
	}
	if applied == 0 {
		return Row{}, ignored, ErrNoRecognizedFields
	}
	r.UpdatedAt = FormatTime(now)
	if err := errors.Join(Validate(&r), patchedOrigin(&old, &r, f)); err != nil {
		return Row{}, ignored, err
	}
	before := violations(&old)
	for _, code := range violations(&r) {
		if !slices.Contains(before, code) {
			return Row{}, ignored, newRefusal(code)
		}
	}
	return r, ignored, nil
}

// patchedOrigin is CheckCredentialOrigin for a PATCH: a patch that writes target
// or auth must leave a row whose credential goes to a literal origin; one that
// writes neither may maintain a row stored before the rule (its calls are refused
// at run time until its target is fixed).
func patchedOrigin(old, r *Row, f Fields) error {
	err := CheckCredentialOrigin(r)
	if err != nil && !f.Has("target") && !f.Has("auth") && CheckCredentialOrigin(old) != nil {
		return nil
	}
	return err
}

// fromFields returns a row with the column defaults, overwritten by every writable
// field f names.
func fromFields(f Fields) Row {
	r := Row{
		Enabled:        DefaultEnabled,
		PlannerVisible: DefaultPlannerVisible,
		PlannerRank:    DefaultPlannerRank,
		Sensitive:      DefaultSensitive,
	}
	for i := range columns {
		if f.present&(1<<i) != 0 {
			copyColumn(i, &r, &f.Values)
		}
	}
	return r
}
