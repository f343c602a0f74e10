// Package contract owns the directory row: its type, validation and hygiene gates,
// the PATCH allow-list, docstring parsing, the contract fingerprint and the contract
// document. Everything here is pure: no I/O, no clock, no environment.
package contract
