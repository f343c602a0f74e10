// Package natsrunner runs rows whose runner is nats: a request-reply on the subject
// in target, so any program on the bus can serve a capability.
package natsrunner
