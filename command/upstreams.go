package command

import (
	"context"
	"fmt"

	"github.com/capdir/capdir/eventlog/wire"
)

// Upstreams registers and removes the owner's upstream MCP servers: an
// UPSTREAM_REGISTERED or UPSTREAM_REMOVED event on the upstream's subject of the
// control stream, answered once this node's projection has folded it. A
// registration holds a streamable HTTP URL and a credential named by variable;
// it can hold no command (a stdio upstream is code run on the node: only the
// operator's flags name one).
type Upstreams struct{ cfg Config }

// Upstreams registers and removes upstream MCP servers.
func (s *Side) Upstreams() *Upstreams { return s.upstreams }

// Register registers (or replaces) the upstream reg.Name; changed is false when
// the same registration was there (nothing is appended). Errors: ErrBadRequest
// for a name, URL or auth Config.CheckUpstream refuses, or an auth naming a
// variable off the allow-list (a *contract.ValidationError); ErrExists for a name
// the operator's flags own (Config.FixedUpstream); ErrUnavailable; ErrNotVisible.
func (u *Upstreams) Register(ctx context.Context, reg wire.UpstreamRegistered) (seq uint64, changed bool, err error) {
	if err := u.checkName(reg.Name); err != nil {
		return 0, false, err
	}
	if u.cfg.CheckUpstream != nil {
		if err := u.cfg.CheckUpstream(reg.Name, reg.URL, reg.Auth); err != nil {
			return 0, false, badRequest(err.Error())
		}
	}
	if err := checkSecretEnv(u.cfg.SecretEnv, reg.Auth); err != nil {
		return 0, false, err
	}
	if old, ok := u.cfg.Projector.Upstream(reg.Name); ok && old.URL == reg.URL && old.Auth == reg.Auth {
		return old.Seq, false, nil
	}
	seq, err = u.append(ctx, reg.Name, wire.TypeUpstreamRegistered, reg)
	return seq, err == nil, err
}

// Remove removes the registered upstream name. The rows of its tools stay; their
// calls fail with ERR:mcp:unknown_upstream:<name> until it is registered again.
// Errors: ErrBadRequest, ErrNotFound (an *UpstreamNotFoundError), ErrExists (a
// name the flags own), ErrUnavailable, ErrNotVisible.
func (u *Upstreams) Remove(ctx context.Context, name string) error {
	if err := u.checkName(name); err != nil {
		return err
	}
	if _, ok := u.cfg.Projector.Upstream(name); !ok {
		return &UpstreamNotFoundError{Name: name}
	}
	_, err := u.append(ctx, name, wire.TypeUpstreamRemoved, wire.UpstreamRemoved{Name: name})
	return err
}

// checkName refuses a name that is no upstream's, and one the flags own.
func (u *Upstreams) checkName(name string) error {
	if !wire.ValidUpstreamName(name) {
		return badRequest(fmt.Sprintf("%q is not an upstream name: give 1 to %d letters, digits, '-' and '_'", clipName(name), wire.MaxUpstreamNameLen))
	}
	if u.cfg.FixedUpstream != nil && u.cfg.FixedUpstream(name) {
		return NewError(ErrExists, "the upstream %s is configured by this node's --mcp-http/--mcp-stdio flags, which the API cannot change: "+
			"register another name, or restart capdir serve without that flag", name)
	}
	return nil
}

func (u *Upstreams) append(ctx context.Context, name, typ string, data any) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, u.cfg.WriteTimeout)
	defer cancel()
	ev, err := u.cfg.Log.NewEvent(typ, wire.OwnerActor, data)
	if err != nil {
		return 0, NewError(ErrUnavailable, "upstream registration not written: %w", err)
	}
	seq, err := u.cfg.Log.Append(ctx, wire.UpstreamSubject(name), ev)
	if err != nil {
		return 0, NewError(ErrUnavailable, "upstream registration not written: %w", err)
	}
	if err := u.cfg.Projector.WaitFor(ctx, wire.ControlStream, seq); err != nil {
		return seq, NewError(ErrNotVisible, "upstream registration written to the log (sequence %d of %s) but not yet projected (%v); "+
			"it takes effect once the projector catches up", seq, wire.ControlStream, err)
	}
	return seq, nil
}

// UpstreamNotFoundError is a name no registered upstream has; it is ErrNotFound.
type UpstreamNotFoundError struct{ Name string }

func (e *UpstreamNotFoundError) Error() string {
	return "no upstream " + e.Name + " is registered (GET /api/upstreams lists them)"
}

// Is matches ErrNotFound.
func (e *UpstreamNotFoundError) Is(target error) bool { return target == ErrNotFound }

// clipName bounds a name quoted back.
func clipName(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
