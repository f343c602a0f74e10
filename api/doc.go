// Package api is capdir's HTTP facade: the directory REST surface, dispatch,
// receipts, breakers, health and metrics. Owner routes require the x-terminal-key
// header; public routes (a receipt's public view and confirm) show no arguments, no
// results and no secrets.
//
// Every write becomes an event on the log; a handler answers after the projector has
// applied it, so a client always reads its own writes.
package api
