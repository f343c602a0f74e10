package capdir

import (
	"errors"
	"fmt"
	"reflect"
)

// ErrWiringInConfig: a Config field that Start sets itself (a component's
// clock, logger, connection, environment or credential salt) was given a
// value. The concrete error is a *WiringError.
var ErrWiringInConfig = errors.New("a field Start sets was given a value")

// WiringError names a Config field that Start sets itself and what sets it
// instead. Its message is "node: Config.F is set by Start; U".
type WiringError struct {
	Field string // Config.Log.Clock, ...
	Use   string // what to do instead
}

func (e *WiringError) Error() string {
	return fmt.Sprintf("node: Config.%s is set by Start; %s", e.Field, e.Use)
}

// Unwrap returns ErrWiringInConfig.
func (e *WiringError) Unwrap() error { return ErrWiringInConfig }

// wiringSet reports every field of c that Start sets from the node's own
// wiring: a value there would be overwritten, so it is refused instead.
func (c *Config) wiringSet() []error {
	const (
		clock  = "pass capdir.WithClock to Start"
		logger = "pass capdir.WithLogger to Start"
		env    = "pass capdir.WithEnv to Start"
		node   = "the node's own (leave it unset)"
	)
	set := []struct {
		field string
		is    bool
		use   string
	}{
		{"Log.Clock", c.Log.Clock != nil, clock},
		{"Log.Logger", c.Log.Logger != nil, logger},
		{"Log.Metrics", c.Log.Metrics != nil, "the node's registry holds its metrics (Node.Registry)"},
		{"HTTPRunner.Env", c.HTTPRunner.Env != nil, env},
		{"HTTPRunner.TagSalt", c.HTTPRunner.TagSalt != "", "derived from TerminalKey"},
		{"NATSRunner.Conn", c.NATSRunner.Conn != nil, "the log's connection (" + node + ")"},
		{"MCPRunner.Upstreams", c.MCPRunner.Upstreams != nil, "name upstream MCP servers in Config.MCPUpstreams"},
		{"MCPRunner.Env", c.MCPRunner.Env != nil, env},
		{"MCPRunner.TagSalt", c.MCPRunner.TagSalt != "", "derived from TerminalKey"},
		{"MCPRunner.Connected", c.MCPRunner.Connected != nil, node},
		{"MCPRunner.ListChanged", c.MCPRunner.ListChanged != nil, node},
		{"Agent.Providers", !reflect.ValueOf(c.Agent.Providers).IsZero(), "give them in Config.AgentProviders"},
		{"Agent.Prices", !reflect.ValueOf(c.Agent.Prices).IsZero(), "give them in Config.AgentPrices"},
		{"Agent.Env", c.Agent.Env != nil, env},
		{"Agent.TagSalt", c.Agent.TagSalt != "", "derived from TerminalKey"},
	}
	var errs []error
	for _, s := range set {
		if s.is {
			errs = append(errs, &WiringError{Field: s.field, Use: s.use})
		}
	}
	return errs
}
