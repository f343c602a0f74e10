package dispatcher

import "github.com/capdir/capdir/contract/failure"

// Failures is the failure table of the runner called name on this node
// (runner.Runners.Failures): what a row's contract document lists among its
// troubleshooting. Nil when no such runner runs here.
func (s *Service) Failures(name string) failure.Table { return s.cfg.Runners.Failures(name) }
