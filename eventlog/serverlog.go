package eventlog

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// serverLog passes the embedded NATS server's notices, warnings and errors to the
// configured slog.Logger (notices at debug level, warnings and errors as such; its
// own debug and trace lines are dropped), each with
// component=nats-server, so an operator sees a slow consumer, a storage problem or
// a refused client connection in capdir's own log. An error saying the store's disk
// has no space left also trips noSpace (see disk.go): the server reports a failed
// write there, and nowhere else.
type serverLog struct {
	l       *slog.Logger
	noSpace func()
}

func (s serverLog) log(level slog.Level, format string, v []any) {
	msg := fmt.Sprintf(format, v...)
	s.l.Log(context.Background(), level, msg, "component", "nats-server")
	if level == slog.LevelError && s.noSpace != nil && isNoSpace(msg) {
		s.noSpace()
	}
}

// isNoSpace is the test the NATS server applies to a store error itself: the
// operating system's ENOSPC text.
func isNoSpace(msg string) bool { return strings.Contains(msg, "no space left") }

func (s serverLog) Noticef(format string, v ...any) { s.log(slog.LevelDebug, format, v) }
func (s serverLog) Warnf(format string, v ...any)   { s.log(slog.LevelWarn, format, v) }
func (s serverLog) Errorf(format string, v ...any)  { s.log(slog.LevelError, format, v) }
func (s serverLog) Fatalf(format string, v ...any)  { s.log(slog.LevelError, format, v) }
func (s serverLog) Debugf(string, ...any)           {}
func (s serverLog) Tracef(string, ...any)           {}
