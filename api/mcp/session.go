package mcp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/runner"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mode is what a session lists.
type mode int

const (
	// modeTools lists every row the credential is offered as a tool of its own.
	modeTools mode = iota
	// modeSearch lists three tools, search, describe and call, whatever the
	// directory's size.
	modeSearch
)

// parseMode reads the mode query parameter: "" or "tools", or "search".
func parseMode(s string) (mode, bool) {
	switch s {
	case "", "tools":
		return modeTools, true
	case "search":
		return modeSearch, true
	}
	return 0, false
}

// session is one MCP session: its own SDK server, whose tools are what its
// credential is offered, kept in step with the directory by the Handler.
type session struct {
	h      *Handler
	id     string // the Mcp-Session-Id, chosen here so it is known before the SDK serves
	caller caller
	mode   mode
	srv    *sdk.Server

	// loaded is set once the session's tools have been read (Handler.load).
	loaded atomic.Bool

	mu      sync.Mutex
	tools   map[string]listed  // tools mode: the rows listed, by key
	ss      *sdk.ServerSession // set once the session's first request has been served
	timer   *time.Timer        // closes a token holder's session when its token expires
	closing bool               // close was called, maybe before ss was known
	posts   int                // POSTs of the session being served, by either path
	idle    *time.Timer        // ends the session after Config.SessionIdle without a POST
	used    time.Time          // when its last POST ended (opened, before any): limit.go ends the idlest

	// inflight counts the POSTs being served (added under mu while not closing):
	// close waits for their answers.
	inflight sync.WaitGroup
}

// listed is one row listed as a tool.
type listed struct {
	tool  runner.Tool            // name, description, parameters (runner.ToolOf)
	entry contract.RegistryEntry // the row's planner order
	sig   string                 // what the client sees of it: a change is announced
}

// pageSize is larger than any directory: tools/list answers in one page, so the
// whole list can be put in planner order (the SDK pages by name).
const pageSize = 1 << 30

func newSession(h *Handler, c caller, m mode) *session {
	s := &session{h: h, id: rand.Text(), caller: c, mode: m, tools: map[string]listed{}, used: h.cfg.Clock()}
	instructions := instructionsTools
	if m == modeSearch {
		instructions = instructionsSearch
	}
	s.srv = sdk.NewServer(&sdk.Implementation{Name: "capdir", Version: version()}, &sdk.ServerOptions{
		Instructions: instructions,
		Logger:       h.cfg.Logger,
		PageSize:     pageSize,
		// listChanged is declared in both modes; only tools mode's list changes.
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}},
		GetSessionID: func() string { return s.id },
		// A list is the credential's own and follows the directory: never from a
		// shared cache, never fresh for long (list_changed says when to list again).
		SetCacheable: func(_ context.Context, _ sdk.Request, c *sdk.Cacheable) { c.TTLMs, c.CacheScope = 0, "private" },
	})
	s.srv.AddReceivingMiddleware(s.middleware)
	if m == modeSearch {
		s.addSearchTools()
	}
	return s
}

const (
	instructionsTools = "Each tool is a capability of the capdir directory that your credential may call. " +
		"A call runs through capdir's gate and leaves a receipt: the result carries its invocation_id. " +
		"The list follows the directory: notifications/tools/list_changed announces a new, changed or removed tool."
	instructionsSearch = "The capdir directory is large: find a capability with search (plain words), " +
		"read its contract with describe (its key), then run it with call (its key and arguments). " +
		"Every call runs through capdir's gate and leaves a receipt: the result carries its invocation_id."
)

// version is capdir's module version as the build recorded it.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// apply lists row under key, or unlists key when row is nil or not offered to
// the session's credential. A change the client can see (the tool appears,
// disappears, or its description, schema or place in the order changes) is
// announced with notifications/tools/list_changed by the SDK.
func (s *session) apply(key string, row *contract.Row) {
	if s.mode != modeTools {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had := s.tools[key]
	if row == nil || !offers(s.caller.viewer, row) {
		if had {
			delete(s.tools, key)
			s.srv.RemoveTools(key)
		}
		return
	}
	l := listed{tool: runner.ToolOf(row), entry: contract.NewRegistryEntry(row)}
	l.sig = l.tool.Description + "\x00" + string(l.tool.Parameters) + "\x00" + strconv.Itoa(row.PlannerRank) + "\x00" + seqString(row.Seq)
	if had && old.sig == l.sig {
		return
	}
	t := &sdk.Tool{Name: key, Description: l.tool.Description, InputSchema: json.RawMessage(l.tool.Parameters)}
	if err := addTool(s.srv, t, s.handleCall); err != nil {
		s.h.cfg.Logger.Warn("mcp: a row is not listed as a tool", "key", key, "error", err)
		if had {
			delete(s.tools, key)
			s.srv.RemoveTools(key)
		}
		return
	}
	s.tools[key] = l
}

func seqString(seq *int64) string {
	if seq == nil {
		return ""
	}
	return strconv.FormatInt(*seq, 10)
}

// addTool adds t to srv. The SDK panics on a schema it will not serve (one whose
// x-mcp-header annotations it refuses): a row's input_schema is the owner's text,
// so that is an error here, not a crash.
func addTool(srv *sdk.Server, t *sdk.Tool, h sdk.ToolHandler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the SDK refuses the tool: %v", p)
		}
	}()
	srv.AddTool(t, h)
	return nil
}

// listedTool is the tool listed under name, if any.
func (s *session) listedTool(name string) (runner.Tool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.tools[name]
	return l.tool, ok
}

// middleware reads a tools-mode session's tools when it is initialized (from
// then on, changes are announced to it), puts tools/list in planner order, and
// takes every tools/call itself: a name the session does not list (a hidden
// row, a disabled one, one outside the token's scope, no row at all) is still
// dispatched, so the gate answers it with its literal refusal and a receipt.
func (s *session) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if s.mode != modeTools || method != "initialize" && method != "tools/list" && method != "tools/call" {
			return next(ctx, method, req)
		}
		if err := s.h.load(s); err != nil {
			return nil, err
		}
		if cr, ok := req.(*sdk.CallToolRequest); ok && cr.Params != nil {
			return s.handleCall(ctx, cr)
		}
		res, err := next(ctx, method, req)
		if lr, ok := res.(*sdk.ListToolsResult); ok && err == nil {
			s.order(lr.Tools)
		}
		return res, err
	}
}

// order sorts tools into planner order: ascending planner_rank, then the
// canonical order (contract.SortRegistry, as the registry lists rows).
func (s *session) order(tools []*sdk.Tool) {
	byKey := make(map[string]*sdk.Tool, len(tools))
	entries := make([]contract.RegistryEntry, 0, len(tools))
	s.mu.Lock()
	for _, t := range tools {
		if l, ok := s.tools[t.Name]; ok {
			byKey[t.Name] = t
			entries = append(entries, l.entry)
		}
	}
	s.mu.Unlock()
	if len(entries) != len(tools) {
		return // a tool changed under the SDK's answer: leave it by name
	}
	contract.SortRegistry(entries)
	for i, e := range entries {
		tools[i] = byKey[e.Key]
	}
}

// handleCall runs a tools/call of tools mode: the listed tool's arguments by its
// parameters (the args string, or the object for a row with its own schema), any
// other name's by their form.
func (s *session) handleCall(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	name := req.Params.Name
	t, ok := s.listedTool(name)
	if !ok {
		t = runner.Tool{Key: name, Schema: !argsOnly(req.Params.Arguments)}
	}
	in, reason := runner.ToolBody(t, string(req.Params.Arguments))
	if reason != "" {
		return toolError(badArguments(name, reason).Error()), nil
	}
	return s.h.invoke(ctx, s.caller, req, name, in), nil
}

// argsOnly reports whether arguments are empty or hold only "args": the form of
// a row without its own schema. Other objects are sent whole, as JSON.
func argsOnly(arguments json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(arguments, &m) != nil {
		return true // not an object: ToolBody says so
	}
	_, has := m["args"]
	return len(m) == 0 || len(m) == 1 && has
}

// adopt records the SDK's session once its first request has been served, and
// returns it; nil when the SDK did not keep one (initialization failed).
func (s *session) adopt() *sdk.ServerSession {
	var ss *sdk.ServerSession
	for x := range s.srv.Sessions() {
		ss = x
	}
	if ss == nil {
		return nil
	}
	s.mu.Lock()
	s.ss = ss
	closing := s.closing
	if !closing && !s.caller.expiry.IsZero() {
		// A token's session ends with the token: past its expiry every request is
		// refused anyway, and the stream would go on announcing changes.
		s.timer = time.AfterFunc(s.caller.expiry.Sub(s.h.cfg.Clock()), func() { s.ending(); ss.Close() })
	}
	if !closing && s.h.cfg.SessionIdle > 0 {
		s.idle = time.AfterFunc(s.h.cfg.SessionIdle, func() { s.ending(); ss.Close() })
		if s.posts > 0 {
			s.idle.Stop() // a POST began while the first was being served
		}
	}
	s.mu.Unlock()
	if closing {
		ss.Close() // closed while its first request was being served
	}
	return ss
}

// ending marks the session closing ahead of the SDK's end of it (the client's
// DELETE, the idle wait, its token's expiry): the SDK forgets a session at once,
// and a POST sent once that is done must find it gone, not be run by the fast
// path before adopt's wait has seen the end. The calls in flight go on.
func (s *session) ending() {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
}

// close ends the session; it waits for the calls in flight to be answered.
func (s *session) close() {
	s.mu.Lock()
	s.closing = true
	ss, timer, idle := s.ss, s.timer, s.idle
	s.mu.Unlock()
	if timer != nil {
		timer.Stop()
	}
	if idle != nil {
		idle.Stop()
	}
	if ss != nil {
		ss.Close()
	}
	s.inflight.Wait() // the fast path's calls, answered outside the SDK
}
