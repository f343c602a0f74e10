package fnrunner

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
	_ "time/tzdata" // zones resolve on a machine without a zoneinfo database
)

// DefaultZone is the zone of the built-in now function unless configured otherwise.
const DefaultZone = "America/Los_Angeles"

// BuiltinConfig configures the built-in functions.
type BuiltinConfig struct {
	// Clock returns the current time; required (pass time.Now in production).
	Clock func() time.Time
	// Zone is the IANA zone of now's calendar fields; DefaultZone when empty.
	Zone string
}

func (c *BuiltinConfig) setDefaults() {
	if c.Zone == "" {
		c.Zone = DefaultZone
	}
}

// Validate reports every problem with c.
func (c BuiltinConfig) Validate() error {
	var errs []error
	if c.Clock == nil {
		errs = append(errs, errors.New("fnrunner: BuiltinConfig.Clock is required"))
	}
	if c.Zone != "" {
		if _, err := time.LoadLocation(c.Zone); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RegisterBuiltins registers now, echo and last_reply_of in reg.
func RegisterBuiltins(reg *Registry, cfg BuiltinConfig) error {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	loc, _ := time.LoadLocation(cfg.Zone)
	reg.Register("now", NowFunc(cfg.Clock, loc))
	reg.Register("echo", Echo)
	reg.Register("last_reply_of", LastReplyOf)
	return nil
}

// nowResult is the output of now, in the documented field order.
type nowResult struct {
	Now   int64  `json:"now"`   // Unix milliseconds
	Today string `json:"today"` // calendar date in the zone, YYYY-MM-DD
	Time  string `json:"time"`  // wall clock in the zone, HH:MM:SS
	Zone  string `json:"zone"`  // IANA zone name
	ISO   string `json:"iso"`   // RFC 3339 with milliseconds and the zone's offset
}

// NowFunc returns the built-in now: it ignores its arguments and returns
// {"now":<unix ms>,"today":"YYYY-MM-DD","time":"HH:MM:SS","zone":"<zone>","iso":"<offset ISO>"}.
func NowFunc(clock func() time.Time, loc *time.Location) Func {
	return func(ctx context.Context, _ []any) (string, error) {
		t := clock().In(loc)
		b, err := json.Marshal(nowResult{
			Now:   t.UnixMilli(),
			Today: t.Format(time.DateOnly),
			Time:  t.Format(time.TimeOnly),
			Zone:  loc.String(),
			ISO:   t.Format("2006-01-02T15:04:05.000Z07:00"),
		})
		return string(b), err
	}
}

// Echo returns its first argument: a string as is, anything else as JSON, "" when
// there is none.
func Echo(_ context.Context, args []any) (string, error) {
	return argText(args, 0)
}

// LastReplyOf returns the trimmed text of the last complete [REPLY]...[/REPLY]
// block in its first argument, or the error no_reply_block (which the fn runner
// reports as ERR:fn:last_reply_of:no_reply_block).
func LastReplyOf(_ context.Context, args []any) (string, error) {
	s, err := argText(args, 0)
	if err != nil {
		return "", err
	}
	const open, closing = "[REPLY]", "[/REPLY]"
	reply, found := "", false
	for {
		i := strings.Index(s, open)
		if i < 0 {
			break
		}
		s = s[i+len(open):]
		j := strings.Index(s, closing)
		if j < 0 {
			break
		}
		// A later [REPLY] before the close starts a new block.
		if k := strings.LastIndex(s[:j], open); k >= 0 {
			s = s[k+len(open):]
			j -= k + len(open)
		}
		reply, found = s[:j], true
		s = s[j+len(closing):]
	}
	if !found {
		return "", ErrNoReplyBlock
	}
	return strings.TrimSpace(reply), nil
}

// argText renders args[i] as text: strings as is, other values as JSON.
func argText(args []any, i int) (string, error) {
	if i >= len(args) || args[i] == nil {
		return "", nil
	}
	if s, ok := args[i].(string); ok {
		return s, nil
	}
	b, err := json.Marshal(args[i])
	return string(b), err
}
