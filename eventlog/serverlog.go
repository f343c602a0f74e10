package eventlog

import (
	"context"
	"fmt"
	"log/slog"
)

// serverLog passes the embedded NATS server's notices, warnings and errors to the
// configured slog.Logger (notices at debug level, warnings and errors as such; its
// own debug and trace lines are dropped), each with
// component=nats-server, so an operator sees a slow consumer, a storage problem or
// a refused client connection in capdir's own log.
type serverLog struct{ l *slog.Logger }

func (s serverLog) log(level slog.Level, format string, v []any) {
	s.l.Log(context.Background(), level, fmt.Sprintf(format, v...), "component", "nats-server")
}

func (s serverLog) Noticef(format string, v ...any) { s.log(slog.LevelDebug, format, v) }
func (s serverLog) Warnf(format string, v ...any)   { s.log(slog.LevelWarn, format, v) }
func (s serverLog) Errorf(format string, v ...any)  { s.log(slog.LevelError, format, v) }
func (s serverLog) Fatalf(format string, v ...any)  { s.log(slog.LevelError, format, v) }
func (s serverLog) Debugf(string, ...any)           {}
func (s serverLog) Tracef(string, ...any)           {}
