package command

// Side is the command side of a node: every change the owner makes, whichever
// entry point it comes through (the REST routes, the console, an importer, a Go
// program embedding capdir). Each entry point only decodes what it was sent,
// calls one of these, and encodes the answer. Safe for concurrent use.
type Side struct {
	dir       *Directory
	tokens    *Tokens
	approvals *Approvals
	breakers  *Breakers
	upstreams *Upstreams
}

// New is the command side over cfg's log and projection.
func New(cfg Config) (*Side, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Side{dir: newDirectory(cfg), tokens: &Tokens{cfg: cfg}, approvals: &Approvals{cfg: cfg}, breakers: &Breakers{cfg: cfg},
		upstreams: &Upstreams{cfg: cfg}}, nil
}

// Directory is the directory's write path.
func (s *Side) Directory() *Directory { return s.dir }

// Tokens mints and revokes capability tokens.
func (s *Side) Tokens() *Tokens { return s.tokens }

// Approvals lists and decides the calls the watcher held.
func (s *Side) Approvals() *Approvals { return s.approvals }

// Breakers resets the rows' auth breakers.
func (s *Side) Breakers() *Breakers { return s.breakers }
