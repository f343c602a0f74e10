package gate

import (
	"errors"
	"os"
	"time"

	"github.com/capdir/capdir/breaker"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/dispatcher/runner"
	"github.com/capdir/capdir/eventlog/wire"
)

// Config configures a Gate.
type Config struct {
	// MaxPayload is the payload ceiling on a request body, in bytes; required.
	MaxPayload int
	// Breaker is the auth breaker's threshold and cooldown.
	Breaker breaker.Config
	// Env resolves credentials for the breaker's rotation check; os.LookupEnv when nil.
	Env runner.Env
	// TagSalt keys credential tags (see runner.Credential.Tag).
	TagSalt string
	// Suggest returns the did_you_mean keys for a key no row has; none when nil.
	Suggest func(key string) []string
	// Clock is the breaker's and the tokens' clock; time.Now when nil.
	Clock func() time.Time
	// Tokens verifies capability tokens (keep one per process: it caches the
	// tokens it has verified); required. A request runs only if capdir attests it
	// is the owner's (Input.Owner) or it carries a token that passes every token
	// check (token_checks.go): there is no gate without the token checks.
	Tokens *token.Verifier
	// Revoked reports whether the token with this id has been revoked (a
	// TOKEN_REVOKED event folded); required.
	Revoked func(jti string) bool
	// Approval reads the owner's approval of an invocation (watcher.go). When nil,
	// no approval is ever granted: a sensitive row runs for the owner only.
	Approval func(invocationID string) Approval
}

func (c *Config) setDefaults() {
	if c.Env == nil {
		c.Env = os.LookupEnv
	}
	if c.Suggest == nil {
		c.Suggest = func(string) []string { return nil }
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var errs []error
	if c.MaxPayload < 1 {
		errs = append(errs, errors.New("gate: MaxPayload must be at least 1"))
	}
	if err := c.Breaker.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Tokens == nil {
		errs = append(errs, errors.New("gate: Tokens is required: every request that capdir does not attest as the owner's must carry a capability token"))
	}
	if c.Revoked == nil {
		errs = append(errs, errors.New("gate: Revoked is required with Tokens"))
	}
	return errors.Join(errs...)
}

// Gate runs the checks. It is safe for concurrent use.
type Gate struct {
	cfg Config
}

// New validates cfg and returns the gate.
func New(cfg Config) (*Gate, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Gate{cfg: cfg}, nil
}

// Input is one request and what the worker's projection holds for its key, read
// after the worker's waits (the row written before the request, the breaker folded
// up to the request).
type Input struct {
	Req *wire.InvocationRequest
	// Row is the key's row; RowErr is projector.ErrNotFound (matched with IsNotFound)
	// or a read failure when there is none.
	Row    *contract.Row
	RowErr error
	// Fingerprint is the row's contract fingerprint; RowSeq is the
	// control-stream sequence of the row's last mutation, which its receipt
	// records (the contract the call ran under).
	Fingerprint string
	RowSeq      uint64
	// Signature is the row's compiled input_schema and argument mapping
	// (contract.CompileSignature, compiled once per row version by the
	// projector), nil when the row has none; SignatureErr is why it does not
	// compile. Left nil for a row with input_schema, the gate compiles it itself.
	Signature    *contract.Signature
	SignatureErr error
	// Breaker is the key's breaker state, read only for rows that can strike
	// (CanStrike); BreakerErr is a failure to read it.
	Breaker    breaker.State
	BreakerErr error
	// NotFound reports whether RowErr means the key has no row.
	NotFound bool
	// Actor is who the receipt names the caller before the gate: the request's
	// attested credential (owner:terminal-key, nats:<client>, …); a verified token
	// makes it token:<sub> (Admission.Actor).
	Actor string
	// Owner reports that capdir attests the request is the owner's (the facade
	// checked the owner key and wrote the request itself). A request's own claim
	// to be the owner's (its credential field) is not this. An owner's request
	// skips the token checks.
	Owner bool
	// RevokedErr is a failure to learn whether the request's token has been
	// revoked (the worker could not bring its projection up to the token's
	// revocation in the log): the token is then refused, never admitted unchecked.
	RevokedErr error
	// Step reports that the request is a step of another call (a flow's, an
	// agent's tool call), run inline by the worker running that call: it cannot
	// be held for approval (watcher.go).
	Step bool
	// Rerun reports that capdir appended the request again once its approval was
	// decided (its event id is keyed with the deployment's secret): the watcher
	// admits it with a granted approval. Any other request to a sensitive row from
	// a caller other than the owner is held for approval (a step is refused).
	Rerun bool
}

// Admission is what the gate learned about a request, refused or not: the row it
// runs against (nil when there is none) and the breaker generation it runs under.
type Admission struct {
	Row               *contract.Row
	Fingerprint       string
	BreakerGeneration uint64
	// Token is the verified token the request came with, from the first token
	// check on, even if a later check refused it; nil for the owner.
	Token *token.Claims
	// Body is the body the runner gets: the request's pipe body, or the pipe form
	// of its arguments object (see inputSchema).
	Body string
}

// Actor is who the receipt names the caller: token:<sub> once a token is
// verified, in.Actor otherwise.
func (a *Admission) Actor(in *Input) string {
	if a.Token != nil {
		return wire.TokenActor(a.Token.Subject)
	}
	return in.Actor
}

// breakerCaller is who the call is to its row's breaker (wire.BreakerCaller).
func (a *Admission) breakerCaller(in *Input) string { return wire.BreakerCaller(a.Actor(in)) }

// Check runs every check in order and returns the first refusal, or nil when the
// request may run.
func (g *Gate) Check(in *Input) (Admission, *Refusal) {
	a := Admission{Body: in.Req.Body}
	for i, c := range checks {
		if r := c(g, in, &a); r != nil {
			r.Check = checkNames[i]
			return a, r
		}
	}
	return a, nil
}

// CanStrike reports whether a row's calls can count against its breaker: only the
// http runner reaches an upstream that answers 401/403 (breaker.Classify counts HTTP
// statuses). Other rows are never refused by a breaker and need not read one.
func CanStrike(row *contract.Row) bool { return row.EffectiveRunner() == runner.RunnerHTTP }

// Decide is the breaker decision now for st and caller ("" for the owner, else
// the actor its receipt names), with the credential auth resolves to now; the tag
// is computed only for a tripped breaker, the one case it can change.
func (g *Gate) Decide(st breaker.State, auth, caller string) breaker.Decision {
	tag := ""
	if st.Tripped(caller) {
		tag = runner.CredentialTag(auth, g.cfg.Env, g.cfg.TagSalt)
	}
	return g.cfg.Breaker.Check(st, g.cfg.Clock(), tag, caller)
}

// MaxPayload is the payload ceiling the gate enforces.
func (g *Gate) MaxPayload() int { return g.cfg.MaxPayload }
