package dispatcher

import "github.com/capdir/capdir/eventlog"

// SetFailpoints installs the crash points used by redelivery tests.
func SetFailpoints(c *ServiceConfig, beforeReceipt, beforeAck func(*eventlog.InvocationRequest) error) {
	c.beforeReceipt, c.beforeAck = beforeReceipt, beforeAck
}

// Draining is closed once Drain (or Stop) has begun.
func Draining(s *Service) <-chan struct{} { return s.draining }
